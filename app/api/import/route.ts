// POST /api/import: a conversation export (ChatGPT, Claude, Open WebUI,
// LibreChat or Mnemo), sent as the raw request body and read as a stream
// (lib/import/run.ts). The answer is a stream too: one JSON line of progress
// per conversation stored (at most a few a second), then the report:
//   {"type":"progress","conversations":…,"messages":…,"duplicates":…,"skipped":…,"bytes":…}
//   {"type":"done","report":{…}}  or  {"type":"error","error":"…"}
// The proxy does not see this path (it would buffer the body); the session is checked here.
import { revalidatePath } from "next/cache";
import { userContext } from "@/lib/user-context";
import { requireUser } from "@/lib/auth/session";
import { getConfig } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { AppError, publicError } from "@/lib/errors";
import { assertSameOrigin, route } from "@/lib/http/route";
import { importConversations, type ImportProgress } from "@/lib/import/run";
import { ANALYZE_AFTER_ROWS, refreshStatistics } from "@/lib/db/statistics";

/** How far past the limit a body is still read through before the 413 (see below). */
const DRAIN_BYTES = 16 * 1024 * 1024;

export const POST = route("POST /api/import", async (request: Request) => {
  assertSameOrigin(request);
  const user = await requireUser();
  const max = getConfig().import.maxBytes;
  const tooLarge = `That file is too large (at most ${Math.round(max / 1024 / 1024)} MB).`;
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > max) {
    // Read a body somewhat over the limit before refusing it, so the browser gets the 413 instead of a reset
    // connection; a far larger one is refused at once.
    if (declared <= max + DRAIN_BYTES) await request.arrayBuffer().catch(() => undefined);
    throw new AppError(tooLarge, 413);
  }
  if (!request.body) throw new AppError("Choose a file to import.", 400);
  const db = await getDb();
  const reader = request.body.getReader();
  let bytes = 0;
  // Read by hand, so that an import that stops early (a refused zip, a broken file) does not cancel the body.
  async function* chunks() {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      bytes += value.byteLength;
      if (bytes > max) throw new AppError(tooLarge, 413);
      yield value;
    }
  }
  // The rest of a body the import stopped reading, read and dropped (up to the limit): a connection left with
  // unread bytes is reset, and the browser or the next request on it would fail.
  async function drain() {
    try {
      while (bytes <= max + DRAIN_BYTES) {
        const { done, value } = await reader.read();
        if (done) return;
        bytes += value.byteLength;
      }
    } catch {
      // the client went away
    }
  }

  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (line: object) => controller.enqueue(encoder.encode(JSON.stringify(line) + "\n"));
      let last = 0;
      const progress = (p: ImportProgress) => {
        if (Date.now() - last < 250) return;
        last = Date.now();
        send({ type: "progress", ...p, bytes });
      };
      try {
        const { threadIds: _ids, ...report } = await importConversations(
          await userContext(db, user.id),
          chunks(),
          progress,
        );
        send({ type: "done", report });
        if (report.messages >= ANALYZE_AFTER_ROWS) await refreshStatistics().catch(() => undefined); // the next background run would too
        try {
          revalidatePath("/", "layout"); // the thread list shows the imported conversations
        } catch {
          // the browser refreshes its view after the report anyway
        }
      } catch (e) {
        send({ type: "error", error: publicError(e, "POST /api/import").message });
      }
      await drain();
      controller.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" } });
});
