// POST /api/ops: runs an operator command (lib/ops/commands.ts) inside the app
// that holds the embedded database, for `npm run import` and the other
// operator scripts started beside it (lib/ops/cli.ts). Only for a caller that
// shows the secret from the data folder's owner file; anything else gets 404,
// as on PostgreSQL, where the scripts open the database themselves.
import { z } from "zod";
import { getDatabase, getDb } from "@/lib/db/client";
import { COMMAND_NAMES, COMMANDS } from "@/lib/ops/commands";
import { opsAuthorized } from "@/lib/ops/endpoint";
import type { OpsLine } from "@/lib/ops/cli";
import { logError } from "@/lib/errors";

export const dynamic = "force-dynamic";

const input = z.object({
  command: z.enum(COMMAND_NAMES),
  args: z.array(z.string().max(4096)).max(32),
  cwd: z.string().min(1).max(4096),
  keys: z.object({ current: z.string().max(64), previous: z.boolean() }),
});

export async function POST(request: Request) {
  if (!opsAuthorized(request)) return new Response("Not found", { status: 404 });
  const parsed = input.safeParse(await request.json().catch(() => null));
  if (!parsed.success) return Response.json({ error: parsed.error.issues[0].message }, { status: 400 });
  const { command, args, cwd, keys } = parsed.data;
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (line: OpsLine) => {
        try {
          controller.enqueue(encoder.encode(JSON.stringify(line) + "\n"));
        } catch {
          // the operator pressed Ctrl+C: the command still finishes here
        }
      };
      let code = 1;
      try {
        code = await COMMANDS[command].run({
          db: getDb,
          database: async () => (await getDatabase()).database,
          args,
          cwd,
          keys,
          inApp: true,
          out: (text) => send({ type: "out", text }),
          err: (text) => send({ type: "err", text }),
        });
      } catch (e) {
        // The operator can read the data folder: the message is theirs to see; the stack goes to the log.
        const ref = globalThis.crypto.randomUUID().slice(0, 8);
        logError(ref, `ops ${command}`, e);
        send({ type: "err", text: `${command} failed: ${(e as Error).message} (server log: ref=${ref})` });
      }
      send({ type: "exit", code });
      try {
        controller.close();
      } catch {}
    },
  });
  return new Response(stream, { headers: { "content-type": "application/x-ndjson", "cache-control": "no-store" } });
}
