// Files made to hurt a server that reads attachments (tests/attachments.test.ts, scripts/check-faults.ts): a PDF
// locked with a password nobody gave, one nested past any parser's patience, one of thousands of pages (written by
// pdf-lib), a drawing that carries a script, a picture with a lying name.
import { PDFDocument } from "pdf-lib";

/** A PDF under the standard security handler whose user password is not the empty one (PDF.js asks for it). */
export function passwordPdf(): Buffer {
  const hex = (n: number) => "<" + "ab".repeat(n) + ">";
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
    `<< /Filter /Standard /V 1 /R 2 /O ${hex(32)} /U ${hex(32)} /P -4 >>`,
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 4 0 R /ID [${hex(16)} ${hex(16)}] >>\n`;
  return Buffer.from(`${out}startxref\n${xref}\n%%EOF\n`, "latin1");
}

/** A PDF whose one object is an array nested `depth` deep. */
export function nestedPdf(depth = 500_000): Buffer {
  return Buffer.from(`%PDF-1.4\n1 0 obj\n${"[".repeat(depth)}\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n`);
}

/** A PDF of `pages` blank pages. */
export async function manyPagesPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage([10, 10]);
  return Buffer.from(await doc.save());
}

export const SVG_WITH_SCRIPT = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>',
);

/** A 1×1 PNG. */
export const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
