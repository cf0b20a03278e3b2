// What a file is, from its bytes: the name a user gave it (or an attacker did) decides nothing but how a text file is
// read (HTML's text, or the text as it is). Pictures: PNG, JPEG, WebP, GIF. Documents: PDF, Word (.docx) and UTF-8
// text (plain, Markdown, code, CSV, JSON, HTML). Anything else is refused with a sentence saying what can be attached.
import { fileTypeFromBuffer } from "file-type";
import { AppError } from "@/lib/errors";
import { DOCX } from "./extract";

export type Sniffed = { kind: "image" | "document"; mime: string };

const IMAGES = new Set(["image/png", "image/jpeg", "image/webp", "image/gif"]);
export const WHAT_CAN_BE_ATTACHED =
  "Attach a PDF, a Word (.docx), text, Markdown, code, CSV, JSON or HTML file, or a PNG, JPEG, WebP or GIF picture.";

export async function sniff(bytes: Uint8Array, name: string): Promise<Sniffed> {
  if (!bytes.length) throw new AppError(`“${name}” is empty (0 bytes).`, 422);
  const found = await fileTypeFromBuffer(bytes);
  if (found && IMAGES.has(found.mime)) return { kind: "image", mime: found.mime };
  if (found?.mime === "application/pdf") return { kind: "document", mime: "application/pdf" };
  if (found?.mime === DOCX) return { kind: "document", mime: DOCX };
  if (found && found.mime !== "application/xml")
    throw new AppError(
      `“${name}” is a ${found.ext.toUpperCase()} file, which can't be attached. ${WHAT_CAN_BE_ATTACHED}`,
      415,
    );
  if (!isText(bytes))
    throw new AppError(`“${name}” is not a kind of file Mnemo can read. ${WHAT_CAN_BE_ATTACHED}`, 415);
  const head = new TextDecoder().decode(bytes.subarray(0, 4096)).toLowerCase();
  // A picture drawn in SVG is a program a browser runs (scripts included): never taken as a picture.
  if (/<svg[\s>]/.test(head))
    throw new AppError(`“${name}” is an SVG drawing, which can't be attached. ${WHAT_CAN_BE_ATTACHED}`, 415);
  const html = /\.html?$/i.test(name) || /^\s*(<!doctype html|<html[\s>])/.test(head);
  return { kind: "document", mime: html ? "text/html" : "text/plain" };
}

/** UTF-8 without NUL bytes or other control characters (tabs, line breaks and form feeds aside). */
function isText(bytes: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  return !/[\u0000-\u0008\u000E-\u001F\u007F]/.test(text.slice(0, 100_000));
}
