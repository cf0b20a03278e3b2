// PDFs for tests, browser tests and benchmarks, written by pdf-lib (a real writer, not a hand-made file): one page
// per string, its text wrapped to the page as a report's is.
import { PDFDocument, StandardFonts } from "pdf-lib";

export async function pdfOf(pages: string[], fontSize = 11): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const text of pages)
    doc.addPage([595, 842]).drawText(text, {
      x: 40,
      y: 800,
      size: fontSize,
      font,
      maxWidth: 515,
      lineHeight: fontSize * 1.3,
    });
  return Buffer.from(await doc.save());
}
