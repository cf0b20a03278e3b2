// The command-line side of an operator command. On PostgreSQL, or on an
// embedded database that no process holds, the command runs here. While the app
// holds the embedded database (lib/db/owner.ts), the command is sent to the
// app's loopback operator endpoint with the secret from the owner file, and its
// output is printed here as it comes; any other holder refuses it with a message
// naming the holder.
import { closeDb, getDb } from "@/lib/db/client";
import { openDatabase, resolveDatabaseTarget, type OpenDatabase } from "@/lib/db/engine";
import { DatabaseInUseError, describeOwner, liveOwner, type Owner } from "@/lib/db/owner";
import { COMMANDS, keyFingerprint, type CommandName } from "./commands";

export type OpsLine = { type: "out" | "err"; text: string } | { type: "exit"; code: number };

export async function runOperatorCli(name: CommandName, args = process.argv.slice(2)): Promise<never> {
  let code = 1;
  let raw: Promise<OpenDatabase> | undefined; // db:migrate's own connection (no Prisma, no migration on open)
  try {
    code = await run(name, args, () => (raw ??= openDatabase(resolveDatabaseTarget())));
  } catch (e) {
    console.error(e instanceof DatabaseInUseError ? e.message : `${name} failed: ${(e as Error).message}`);
  } finally {
    await closeDb().catch(() => undefined);
    await raw?.then((d) => d.close()).catch(() => undefined);
  }
  process.exit(code);
}

/** Where the command was typed: npm run starts scripts in the app's folder and says the shell's in INIT_CWD. */
const callerCwd = () => process.env.INIT_CWD ?? process.cwd();

async function run(name: CommandName, args: string[], database: () => Promise<OpenDatabase>): Promise<number> {
  const usage = (COMMANDS[name] as { usage?: (a: string[]) => string | null }).usage?.(args);
  if (usage) {
    console.error(usage);
    return 2;
  }
  const target = resolveDatabaseTarget();
  if (target.kind === "pglite" && target.pgliteDir) {
    const owner = liveOwner(target.pgliteDir);
    if (owner?.opsUrl) return forward(owner, name, args);
    if (owner) throw new DatabaseInUseError(owner, target.pgliteDir);
  }
  const command = COMMANDS[name];
  if (command.startup) await (await import("@/lib/startup")).startup();
  return command.run({
    db: getDb,
    database,
    args,
    cwd: callerCwd(),
    keys: keyFingerprint(),
    inApp: false,
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  });
}

async function forward(owner: Owner, name: CommandName, args: string[]): Promise<number> {
  console.error(`[mnemo] the embedded database is held by ${describeOwner(owner)}: running ${name} there`);
  const res = await fetch(`${owner.opsUrl}/api/ops`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner.secret}`, "content-type": "application/json" },
    body: JSON.stringify({ command: name, args, cwd: callerCwd(), keys: keyFingerprint() }),
  }).catch((e: Error) => {
    throw new Error(`the app at ${owner.opsUrl} did not answer (${e.message}); is it still starting?`);
  });
  if (!res.ok || !res.body) throw new Error(`the app refused the command (HTTP ${res.status}: ${await res.text()})`);
  let code = 1;
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = JSON.parse(buffer.slice(0, nl)) as OpsLine;
      buffer = buffer.slice(nl + 1);
      if (line.type === "exit") code = line.code;
      else (line.type === "out" ? console.log : console.error)(line.text);
    }
  }
  return code;
}
