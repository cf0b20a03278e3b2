// A document's text, read on the server. PDFs are read by unpdf (Mozilla's PDF.js built for servers, no native
// parts), Word documents by mammoth, each in a worker thread of its own with a time limit and a memory limit (and a
// page limit for PDFs): a file made to be slow or huge (deep nesting, a huge page count, a zip that unpacks to
// gigabytes) costs that worker, never the server's event loop, and is refused with a clear sentence. HTML gives its
// visible text (html-to-text); the other text kinds are read as they are.
import path from "node:path";
import { Worker } from "node:worker_threads";
import { convert } from "html-to-text";
import { AppError } from "@/lib/errors";

/** Pages in one document at most (a 300-page report is ordinary; 100,000 blank pages is an attack). */
export const MAX_PAGES = 2_000;
/** Characters of text kept from one document. */
export const MAX_TEXT_CHARS = 4_000_000;
const READ_TIMEOUT_MS = 30_000;
export const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** Pages are separated by a form feed in the stored text (page numbers for "p. 4"). */
export const PAGE_BREAK = "\f";

export type Extracted = { text: string; pages: number | null };

// CommonJS, evaluated in the worker (unpdf and mammoth resolve from the app's folder, as the encoder's packages do).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { createRequire } = require("node:module");
const load = createRequire(workerData.base);
const pdf = async (bytes) => {
  const { extractText, getDocumentProxy } = load("unpdf");
  const doc = await getDocumentProxy(bytes);
  if (doc.numPages > workerData.maxPages) return { tooManyPages: doc.numPages };
  const { text, totalPages } = await extractText(doc, { mergePages: false });
  return { pages: text, totalPages };
};
const docx = async (bytes) => {
  const { value } = await load("mammoth").extractRawText({ buffer: Buffer.from(bytes) });
  return { pages: [value], totalPages: null };
};
(async () => {
  try {
    const bytes = new Uint8Array(workerData.bytes);
    parentPort.postMessage(await (workerData.kind === "pdf" ? pdf(bytes) : docx(bytes)));
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.name) || "Error") + ": " + String((err && err.message) || err) });
  }
})();
`;

type Reply = { pages?: string[]; totalPages?: number | null; tooManyPages?: number; error?: string };
type Kind = "pdf" | "docx";
const WHAT: Record<Kind, string> = { pdf: "This PDF", docx: "This Word document" };

function readInWorker(kind: Kind, bytes: Uint8Array): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { base: path.join(process.cwd(), "package.json"), bytes, maxPages: MAX_PAGES, kind },
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new AppError(`${WHAT[kind]} took too long to read (over 30 seconds), so it was not attached.`, 422));
    }, READ_TIMEOUT_MS);
    worker.once("message", (m: Reply) => {
      clearTimeout(timer);
      void worker.terminate();
      resolve(m);
    });
    worker.once("error", (e) => {
      clearTimeout(timer);
      reject(
        /ERR_WORKER_OUT_OF_MEMORY/.test(String((e as NodeJS.ErrnoException).code ?? e.message))
          ? new AppError(`${WHAT[kind]} needs too much memory to read, so it was not attached.`, 422)
          : e,
      );
    });
  });
}

async function readInIsolation(kind: Kind, bytes: Uint8Array): Promise<Extracted> {
  const r = await readInWorker(kind, bytes);
  if (r.tooManyPages)
    throw new AppError(
      `This PDF has ${r.tooManyPages.toLocaleString("en-US")} pages; Mnemo reads at most ${MAX_PAGES.toLocaleString("en-US")}.`,
      422,
    );
  if (r.error) {
    if (/^PasswordException/.test(r.error))
      throw new AppError("This PDF is protected by a password: remove the password and attach it again.", 422);
    throw new AppError(`${WHAT[kind]} could not be read (it may be damaged).`, 422);
  }
  const pages = (r.pages ?? []).map((p) => p.replaceAll(PAGE_BREAK, " ").trim());
  return { text: pages.join(PAGE_BREAK), pages: kind === "pdf" ? (r.totalPages ?? pages.length) : null };
}

/** The text of a document of the given (sniffed) type. */
export async function extractText(bytes: Uint8Array, mime: string): Promise<Extracted> {
  const raw =
    mime === "application/pdf"
      ? await readInIsolation("pdf", bytes)
      : mime === DOCX
        ? await readInIsolation("docx", bytes)
        : { text: decodeText(bytes, mime), pages: null };
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
