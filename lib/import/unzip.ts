// ChatGPT and Claude send their exports as a zip. Rather than asking people to
// unpack it, the import reads the zip as it arrives (fflate's streaming Unzip,
// which inflates synchronously as each piece comes in) and passes on the
// bytes of the `conversations.json` inside. Claude's `projects.json` (or
// `projects/<uuid>.json`) and `memories.json`, and ChatGPT's `message_feedback.json`, are kept aside for the
// caller, within the same limits, whichever comes first in the zip; ChatGPT's uploads and pictures are written aside
// for their messages (lib/import/zip-assets.ts); other files are skipped unread. A body that is not a zip passes
// through unchanged.
//
// A zip bomb is refused as it inflates: the inflated bytes are capped at the
// import's size limit, and past 32 MB they may not exceed 100 times the
// compressed bytes read (real conversation exports compress about 5 to 20
// times). The compressed input is fed in small slices with a turn of the event
// loop between them, so inflating never holds the server for long.
import { Unzip, UnzipInflate } from "fflate";
import { AppError } from "@/lib/errors";
import { nextTick } from "./yield";
import { keepAsset, type ZipAssets } from "./zip-assets";

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]; // "PK\x03\x04"
/** conversations.json, or the numbered parts newer exports split it into (conversations-000.json, -001, …). */
const WANTED = /(^|\/)conversations(-\d{1,6})?\.json$/i;
/**
 * Yielded between two conversation files of one zip (each a JSON document of its own): the reader ends one
 * document there and starts the next. Compared by identity.
 */
export const NEXT_FILE: Uint8Array = new Uint8Array(0);
/**
 * Claude's projects and memory: projects.json or projects/<uuid>.json, memories.json or memories/<account>.json;
 * ChatGPT's ratings of answers: message_feedback.json.
 */
const SIDE =
  /(^|\/)((projects|memories)(\.json|\/[^/]+\.json)|message_feedback\.json|conversation_asset_file_names\.json)$/i;
/** Compressed bytes inflated between two turns of the event loop (deflate inflates at most ~1,000×). */
const SLICE = 16 * 1024;
const RATIO_FREE_BYTES = 32 * 1024 * 1024;
const MAX_RATIO = 100;
const MAX_SIDE_FILES = 1_000;
/**
 * Side files are kept whole until the conversations are read, so they are capped: real ones are kilobytes (a project
 * list, a memory summary, ratings). One past this is dropped unread (the report says so), not held in memory.
 */
export const MAX_SIDE_BYTES = 16 * 1024 * 1024;
const MAX_CONVERSATION_FILES = 10_000;

export type UnzipLimits = { maxInflatedBytes: number };
/**
 * Files read beside conversations.json, each as its inflated chunks (filled once the zip has been read); `tooLarge`:
 * over MAX_SIDE_BYTES (with the side files before it), dropped.
 */
export type SideFiles = Array<{ name: string; chunks: Uint8Array[]; tooLarge?: boolean }>;

type Chunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/**
 * `side`: where the side files go; `assets`: where the files beside the conversations go (ChatGPT's uploads and
 * pictures: lib/import/zip-assets.ts), each within the same limits on inflated bytes.
 */
export async function* unzipIfNeeded(
  chunks: Chunks,
  limits: UnzipLimits,
  side?: SideFiles,
  assets?: ZipAssets,
): AsyncGenerator<Uint8Array | string> {
  const it = (
    Symbol.asyncIterator in chunks
      ? chunks[Symbol.asyncIterator]()
      : (chunks as Iterable<Uint8Array | string>)[Symbol.iterator]()
  ) as AsyncIterator<Uint8Array | string> | Iterator<Uint8Array | string>;
  const first = await it.next();
  if (first.done) return;
  const head = first.value;
  const isZip = typeof head !== "string" && ZIP_MAGIC.every((b, i) => head[i] === b);
  if (!isZip) {
    yield head;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    return;
  }

  const out: Uint8Array[] = [];
  let files = 0;
  let complete = false;
  let bytes = 0;
  let compressed = 0;
  let failure: Error | null = null;
  let bomb = false;
  let sideBytes = 0;
  /** Counts inflated bytes against the limits; false (and the file stopped) when they are passed. */
  const within = (n: number, file: { terminate(): void }) => {
    bytes += n;
    if (bytes > limits.maxInflatedBytes || (bytes > RATIO_FREE_BYTES && bytes > compressed * MAX_RATIO)) {
      bomb = true;
      file.terminate();
    }
    return !bomb;
  };
  const unzip = new Unzip((file) => {
    if (side && SIDE.test(file.name) && side.length < MAX_SIDE_FILES) {
      const kept: SideFiles[number] = { name: file.name, chunks: [] };
      side.push(kept);
      file.ondata = (err, data) => {
        if (err) failure = err;
        else if (!data.length || kept.tooLarge || !within(data.length, file)) return;
        else if ((sideBytes += data.length) > MAX_SIDE_BYTES) {
          kept.tooLarge = true;
          kept.chunks = [];
          file.terminate();
        } else kept.chunks.push(data);
      };
      file.start();
      return;
    }
    const sink = !WANTED.test(file.name) && assets ? keepAsset(assets, file.name) : null;
    if (sink) {
      file.ondata = (err, data, final) => {
        if (err) failure = err;
        else sink(within(data.length, file) ? data : new Uint8Array(0), final || bomb);
      };
      file.start();
      return;
    }
    if (!WANTED.test(file.name) || files >= MAX_CONVERSATION_FILES) return; // not started: skipped
    // The zip's entries inflate one after another: a later part starts after the last one ended.
    if (files++) out.push(NEXT_FILE);
    complete = false;
    file.ondata = (err, data, final) => {
      if (err) failure = err;
      else if (data.length && within(data.length, file)) out.push(data);
      if (final) complete = true;
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  const push = (slice: Uint8Array, final: boolean) => {
    compressed += slice.length;
    try {
      unzip.push(slice, final);
    } catch {
      failure = new Error("corrupt zip");
    }
    if (bomb)
      throw new AppError(
        `That zip inflates to far more than a conversation export (over ${limitText(limits, bytes, compressed)}). Choose conversations.json (or each conversations-000.json, -001… part) from it instead.`,
        413,
      );
    if (failure)
      throw new AppError(
        "That zip file is damaged or cut short. Download the export again, or choose conversations.json from it.",
        400,
      );
  };
  async function* feed(chunk: Uint8Array | string) {
    const data = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    for (let at = 0; at < data.length; at += SLICE) {
      push(data.subarray(at, at + SLICE), false);
      while (out.length) yield out.shift()!;
      await nextTick();
    }
  }
  yield* feed(head);
  for (let r = await it.next(); !r.done; r = await it.next()) yield* feed(r.value);
  push(new Uint8Array(0), true);
  while (out.length) yield out.shift()!;
  if (!files)
    throw new AppError(
      "That zip has no conversations.json. Choose the export zip from ChatGPT or Claude, or a .json export.",
      400,
    );
  // Cut short inside the file: a partial JSON is reported by the reader; nothing at all, here.
  if (!complete || bytes === 0)
    throw new AppError(
      "That zip file is damaged or cut short. Download the export again, or choose conversations.json from it.",
      400,
    );
}

function limitText(limits: UnzipLimits, inflated: number, compressed: number): string {
  const mb = (b: number) => `${Math.round(b / 1024 / 1024)} MB`;
  return inflated > limits.maxInflatedBytes
    ? `the ${mb(limits.maxInflatedBytes)} import limit`
    : `${MAX_RATIO} times its compressed size after ${mb(compressed)}`;
}
