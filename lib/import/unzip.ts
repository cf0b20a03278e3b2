// ChatGPT and Claude send their exports as a zip. Rather than asking people to
// unpack it, the import reads the zip as it arrives (fflate's streaming Unzip,
// which inflates synchronously as each piece comes in) and passes on the
// bytes of the `conversations.json` inside; other files (images, audio) are
// skipped unread. A body that is not a zip passes through unchanged.
import { Unzip, UnzipInflate } from "fflate";
import { AppError } from "@/lib/errors";

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]; // "PK\x03\x04"
const WANTED = /(^|\/)conversations\.json$/i;

type Chunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

export async function* unzipIfNeeded(chunks: Chunks): AsyncGenerator<Uint8Array | string> {
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
  let found = false;
  let complete = false;
  let bytes = 0;
  let failure: Error | null = null;
  const unzip = new Unzip((file) => {
    if (found || !WANTED.test(file.name)) return; // not started: skipped
    found = true;
    file.ondata = (err, data, final) => {
      if (err) failure = err;
      else if (data.length) {
        bytes += data.length;
        out.push(data);
      }
      if (final) complete = true;
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  const feed = (chunk: Uint8Array | string, final: boolean) => {
    try {
      unzip.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk, final);
    } catch {
      failure = new Error("corrupt zip");
    }
    if (failure)
      throw new AppError(
        "That zip file is damaged or cut short. Download the export again, or choose conversations.json from it.",
        400,
      );
  };
  feed(head, false);
  while (out.length) yield out.shift()!;
  for (let r = await it.next(); !r.done; r = await it.next()) {
    feed(r.value, false);
    while (out.length) yield out.shift()!;
  }
  feed(new Uint8Array(0), true);
  while (out.length) yield out.shift()!;
  if (!found)
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
