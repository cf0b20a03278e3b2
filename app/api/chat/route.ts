// POST /api/chat: one streamed turn. Body: a TurnRequest (lib/chat/turn.ts).
// Answers newline-delimited JSON events: start, delta..., done | error.
// A closed connection does not stop the answer (a reload shows it finished);
// POST /api/chat/stop does, keeping the partial answer marked "stopped".
import { after } from "next/server";
import { getDb } from "@/lib/db/client";
import { jwtUser } from "@/lib/auth/jwt-session";
import { runTurn, TurnError } from "@/lib/chat/turn";
import { ThreadNotFoundError } from "@/lib/chat/threads";

export const dynamic = "force-dynamic";

export async function POST(request: Request) {
  const user = await jwtUser();
  if (!user) return Response.json({ error: "Sign in first." }, { status: 401 });
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return Response.json({ error: "The request body must be JSON." }, { status: 400 });
  }
  const db = await getDb();
  const turn = runTurn(db, user.id, body, { defer: (task) => after(task), sid: user.sid });

  // Run the first step before answering, so bad input and missing threads get
  // a proper status code instead of an error inside a 200 stream.
  let first: IteratorResult<unknown>;
  try {
    first = await turn.next();
  } catch (e) {
    if (e instanceof TurnError) return Response.json({ error: e.message }, { status: e.status });
    if (e instanceof ThreadNotFoundError) return Response.json({ error: "Thread not found." }, { status: 404 });
    throw e;
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
          send({ type: "error", message: `Something went wrong: ${(e as Error).message}`, item: null });
        } catch {}
      } finally {
        try {
          controller.close();
        } catch {}
      }
    },
  });
  return new Response(stream, {
    headers: { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" },
  });
}
