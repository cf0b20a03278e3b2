// A document's text, read on the server. PDFs are read by unpdf (Mozilla's PDF.js built for servers, no native
// parts) in a worker thread of its own, with a time limit, a memory limit and a page limit: a PDF made to be slow
// (deep nesting, a huge page count) costs that worker, never the server's event loop, and is refused with a clear
// sentence. HTML gives its visible text (html-to-text); the other text kinds are read as they are.
import path from "node:path";
import { Worker } from "node:worker_threads";
import { convert } from "html-to-text";
import { AppError } from "@/lib/errors";

/** Pages in one document at most (a 300-page report is ordinary; 100,000 blank pages is an attack). */
export const MAX_PAGES = 2_000;
/** Characters of text kept from one document. */
export const MAX_TEXT_CHARS = 4_000_000;
const PDF_TIMEOUT_MS = 30_000;

/** Pages are separated by a form feed in the stored text (page numbers for "p. 4"). */
export const PAGE_BREAK = "\f";

export type Extracted = { text: string; pages: number | null };

// CommonJS, evaluated in the worker (unpdf resolves from the app's folder, as the encoder's packages do).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { createRequire } = require("node:module");
const { extractText, getDocumentProxy } = createRequire(workerData.base)("unpdf");
(async () => {
  try {
    const pdf = await getDocumentProxy(new Uint8Array(workerData.bytes));
    if (pdf.numPages > workerData.maxPages) {
      parentPort.postMessage({ tooManyPages: pdf.numPages });
      return;
    }
    const { text, totalPages } = await extractText(pdf, { mergePages: false });
    parentPort.postMessage({ pages: text, totalPages });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.name) || "Error") + ": " + String((err && err.message) || err) });
  }
})();
`;

type PdfReply = { pages?: string[]; totalPages?: number; tooManyPages?: number; error?: string };

function readPdfInWorker(bytes: Uint8Array): Promise<PdfReply> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { base: path.join(process.cwd(), "package.json"), bytes, maxPages: MAX_PAGES },
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new AppError("This PDF took too long to read (over 30 seconds), so it was not attached.", 422));
    }, PDF_TIMEOUT_MS);
    worker.once("message", (m: PdfReply) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(m);
    });
    worker.once("error", (e) => {
      clearTimeout(timer);
      reject(
        /ERR_WORKER_OUT_OF_MEMORY/.test(String((e as NodeJS.ErrnoException).code ?? e.message))
          ? new AppError("This PDF needs too much memory to read, so it was not attached.", 422)
          : e,
      );
    });
  });
}

async function readPdf(bytes: Uint8Array): Promise<Extracted> {
  const r = await readPdfInWorker(bytes);
  if (r.tooManyPages)
    throw new AppError(
      `This PDF has ${r.tooManyPages.toLocaleString("en-US")} pages; Mnemo reads at most ${MAX_PAGES.toLocaleString("en-US")}.`,
      422,
    );
  if (r.error) {
    if (/^PasswordException/.test(r.error))
      throw new AppError("This PDF is protected by a password: remove the password and attach it again.", 422);
    throw new AppError("This PDF could not be read (it may be damaged).", 422);
  }
  const pages = (r.pages ?? []).map((p) => p.replaceAll(PAGE_BREAK, " ").trim());
  return { text: pages.join(PAGE_BREAK), pages: r.totalPages ?? pages.length };
}

/** The text of a document of the given (sniffed) type. */
export async function extractText(bytes: Uint8Array, mime: string): Promise<Extracted> {
  const raw = mime === "application/pdf" ? await readPdf(bytes) : { text: decodeText(bytes, mime), pages: null };
  return { ...raw, text: raw.text.length > MAX_TEXT_CHARS ? raw.text.slice(0, MAX_TEXT_CHARS) : raw.text };
}

function decodeText(bytes: Uint8Array, mime: string): string {
  const text = new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "");
  if (mime !== "text/html") return text;
  return convert(text, {
    wordwrap: false,
    selectors: [
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
      { selector: "script", format: "skip" },
      { selector: "style", format: "skip" },
    ],
  });
}
