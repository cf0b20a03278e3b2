// POST /api/chat: one streamed turn. Body: a TurnRequest (lib/chat/turn.ts).
// Answers newline-delimited JSON events: start, delta..., done | error.
// A closed connection does not stop the answer (a reload shows it finished);
// POST /api/chat/stop does, keeping the partial answer marked "stopped".
// Only same-origin JSON requests are accepted (no cross-site form posts).
import { after } from "next/server";
import { getDb } from "@/lib/db/client";
import { jwtUser } from "@/lib/auth/jwt-session";
import { messageLimit, runTurn } from "@/lib/chat/turn";
import { AppError, UnauthorizedError, publicError } from "@/lib/errors";
import { assertSameOrigin, errorResponse, readJson } from "@/lib/http/route";
import { getConfig } from "@/lib/config";

export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  let turn: ReturnType<typeof runTurn>;
  let first: IteratorResult<unknown>;
  // The first step (validation, ownership, saving the question) runs before
  // answering, so bad input, missing threads and an unreachable database get a
  // proper status code instead of an error inside a 200 stream.
  try {
    assertSameOrigin(request);
    const user = await jwtUser();
    if (!user) throw new UnauthorizedError();
    // The JSON body is at most a message plus a little structure.
    const max = getConfig().chat.maxMessageChars;
    const body = await readJson(request, max * 6 + 10_000).catch((e) => {
      // Far past the limit: say what the limit is, as for a message just past it.
      if (e instanceof AppError && e.status === 413) throw new AppError(messageLimit(max), 413);
      throw e;
    });
    const db = await getDb();
    turn = runTurn(db, user.id, body, {
      defer: (task) => after(task),
      session: user.session,
      admin: user.role === "ADMIN",
    });
    first = await turn.next();
  } catch (e) {
    return errorResponse(e, "POST /api/chat");
  }

  const encoder = new TextEncoder();
  const stream = new ReadableStream({
    async start(controller) {
      const send = (ev: unknown) => controller.enqueue(encoder.encode(JSON.stringify(ev) + "\n"));
      try {
        if (!first.done) send(first.value);
        for await (const ev of turn) {
          try {
            send(ev);
          } catch {
            /* the client went away; keep going so the answer is saved */
          }
        }
      } catch (e) {
        try {
          send({ type: "error", message: publicError(e, "chat stream").message, item: null });
        } catch {}
      } finally {
        try {
          controller.close();
        } catch {}
      }
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "application/x-ndjson; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}
