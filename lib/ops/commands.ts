// Operator commands (`npm run import`, `memory:embed`, `jobs:retention`,
// `jobs:consolidate`, `keys:rotate`, `worker -- --once`, `db:migrate`) as
// functions of a database and their arguments. A script runs one in its own
// process (PostgreSQL, or an embedded database nobody holds); while the app
// holds the embedded database, lib/ops/cli.ts sends it to the app's operator
// endpoint (app/api/ops/route.ts), which runs the same function in the app.
import crypto from "node:crypto";
import { userContext } from "@/lib/user-context";
import fs from "node:fs";
import path from "node:path";
import type { Db } from "@/lib/db/client";
import type { OpenDatabase } from "@/lib/db/engine";
import { getConfig } from "@/lib/config";
import { count } from "@/lib/text/plural";

export type CommandContext = {
  db(): Promise<Db>;
  database(): Promise<OpenDatabase>;
  args: string[];
  /** The operator's working directory: relative file names are read from there. */
  cwd: string;
  /** Which master key the operator's shell has (a hash, never the key) and whether it names a previous one. */
  keys: KeyFingerprint;
  /** True when the command runs inside the app that holds the embedded database. */
  inApp: boolean;
  out(line: string): void;
  err(line: string): void;
};

export type KeyFingerprint = { current: string; previous: boolean };

export function keyFingerprint(env: NodeJS.ProcessEnv = process.env): KeyFingerprint {
  const key = env.MNEMO_ENCRYPTION_KEY?.trim() ?? "";
  return {
    current: key ? crypto.createHash("sha256").update(key).digest("hex").slice(0, 16) : "",
    previous: !!env.MNEMO_ENCRYPTION_KEY_PREVIOUS?.trim(),
  };
}

type Command = {
  /** Validates the configuration and (PostgreSQL in development) the schema before running, as the app does. */
  startup: boolean;
  /** The usage line when the arguments cannot work, checked before anything runs or is sent to the app. */
  usage?(args: string[]): string | null;
  run(ctx: CommandContext): Promise<number>;
};

const arg = (args: string[], name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

/** Prints at most one progress line every `ms`. */
function throttled(err: (line: string) => void, ms = 1000) {
  let last = 0;
  return (line: string) => {
    if (Date.now() - last < ms) return;
    last = Date.now();
    err(line);
  };
}

/** The import command's user and file, from its arguments. */
function importArgs(args: string[]) {
  const u = args.indexOf("--user");
  return { email: arg(args, "--user"), file: args.filter((_, i) => u < 0 || (i !== u && i !== u + 1))[0] };
}

const importUsage = (args: string[]) => {
  const { email, file } = importArgs(args);
  return email && file ? null : "Usage: npm run import -- --user <email> <file>";
};

async function importCommand(ctx: CommandContext): Promise<number> {
  const { importConversations } = await import("@/lib/import/run");
  const { ANALYZE_AFTER_ROWS, refreshStatistics } = await import("@/lib/db/statistics");
  const { email, file } = importArgs(ctx.args);
  if (!email || !file) {
    ctx.err(importUsage(ctx.args)!);
    return 2;
  }
  // Relative to the directory the command was typed in (the shell's), not the app's.
  const full = path.resolve(ctx.cwd, file);
  const stat = fs.statSync(full, { throwIfNoEntry: false });
  if (!stat?.isFile()) {
    ctx.err(`No such file: ${full}`);
    return 2;
  }
  const max = getConfig().import.maxBytes;
  if (stat.size > max) {
    const mb = (b: number) => Math.round(b / 1024 / 1024);
    ctx.err(`That file is too large (${mb(stat.size)} MB; MNEMO_IMPORT_MAX_MB allows ${mb(max)}).`);
    return 2;
  }
  const db = await ctx.db();
  const user = await db.user.findFirst({
    where: { email: { equals: email, mode: "insensitive" } },
    select: { id: true },
  });
  if (!user) {
    ctx.err(`No user with the email ${email}.`);
    return 2;
  }
  const started = Date.now();
  const progress = throttled(ctx.err);
  const { threadIds: _ids, ...report } = await importConversations(
    await userContext(db, user.id),
    fs.createReadStream(full),
    (p) =>
      progress(
        `… ${count(p.conversations, "conversation")}, ${count(p.messages, "message")} imported (${p.duplicates} already there, ${p.skipped} skipped)`,
      ),
  );
  if (report.messages >= ANALYZE_AFTER_ROWS) await refreshStatistics();
  ctx.out(JSON.stringify({ ...report, seconds: Math.round((Date.now() - started) / 100) / 10 }));
  // A file in no format Mnemo reads imported nothing: a failure for the script that ran it.
  return report.error || !report.format ? 1 : 0;
}

async function embedCommand(ctx: CommandContext): Promise<number> {
  const { countPending, embedPending } = await import("@/lib/memory/embed");
  const { resolveEmbedder } = await import("@/lib/llm/embeddings");
  const db = await ctx.db();
  const userId = arg(ctx.args, "--user");
  const e = await resolveEmbedder(db);
  if (!e) {
    ctx.err(
      "No embedding model: set MNEMO_EMBEDDING_MODEL (or Admin → Model settings) and the model connection, or leave the built-in encoder on (MNEMO_BUILTIN_EMBEDDINGS is off).",
    );
    return 2;
  }
  const total = await countPending(db, e, userId);
  const progress = throttled(ctx.err, 2000);
  ctx.err(`embedding ${count(total, "row")} with ${e.model}`);
  try {
    const r = await embedPending(db, {
      userId,
      onProgress: (p) => progress(`… ${p.embedded + p.unembeddable}/${total} rows`),
    });
    ctx.out(
      JSON.stringify({ model: e.model, embedded: r.embedded, unembeddable: r.unembeddable, remaining: r.remaining }),
    );
    return 0;
  } catch (err) {
    const left = await countPending(db, e, userId);
    const why = (err as Error).message.split("\n")[0].replace(/\.$/, "");
    ctx.err(`Stopped: ${why}. ${count(left, "row")} still need a vector; run it again to resume.`);
    return 1;
  }
}

async function retentionCommand(ctx: CommandContext): Promise<number> {
  const { retentionSettings, runRetention } = await import("@/lib/account/retention");
  const at = arg(ctx.args, "--now");
  const now = at ? new Date(at) : new Date();
  if (Number.isNaN(now.getTime())) {
    ctx.err("--now needs an ISO date-time, e.g. 2026-01-31T00:00:00Z");
    return 2;
  }
  const settings = retentionSettings();
  const counts = await runRetention(await ctx.db(), now, settings, getConfig().memory.expireUnusedDays);
  ctx.out(
    JSON.stringify({
      at: now.toISOString(),
      messageRetentionDays: settings.messageDays,
      temporaryChatHours: settings.temporaryChatHours,
      deleted: counts,
    }),
  );
  return 0;
}

async function consolidateCommand(ctx: CommandContext): Promise<number> {
  const { consolidateAll } = await import("@/lib/memory/consolidate-all");
  ctx.out(JSON.stringify(await consolidateAll(await ctx.db())));
  return 0;
}

async function rotateCommand(ctx: CommandContext): Promise<number> {
  const { rotateKeys } = await import("@/lib/crypto/rotate");
  // Inside the app, the app's own keys are used: a new master key needs the app restarted with it.
  if (ctx.inApp) {
    const mine = keyFingerprint();
    if (ctx.keys.previous || ctx.keys.current !== mine.current) {
      ctx.err(
        "The running app holds the embedded database and uses its own MNEMO_ENCRYPTION_KEY. Changing the master key " +
          "needs the app restarted with the new one: stop Mnemo, run `MNEMO_ENCRYPTION_KEY=<new> " +
          "MNEMO_ENCRYPTION_KEY_PREVIOUS=<old> npm run keys:rotate`, then start Mnemo with the new key. " +
          "`npm run keys:rotate` with the app's key (and `-- --data-keys`) runs beside the app.",
      );
      return 2;
    }
  }
  ctx.out(JSON.stringify(await rotateKeys(await ctx.db(), { dataKeys: ctx.args.includes("--data-keys") })));
  return 0;
}

async function workerOnceCommand(ctx: CommandContext): Promise<number> {
  const { runDueJobs } = await import("@/lib/jobs/worker");
  if (!ctx.args.includes("--once")) {
    ctx.err(
      "The running app already runs the background jobs on the embedded database. A separate worker is for " +
        "PostgreSQL deployments (MNEMO_JOBS=off on the web instances); `npm run worker -- --once` runs what is due now.",
    );
    return 2;
  }
  ctx.out(JSON.stringify(await runDueJobs(await ctx.db())));
  return 0;
}

async function migrateCommand(ctx: CommandContext): Promise<number> {
  const { applyMigrations, migrationStatus } = await import("@/lib/db/migrate");
  const { describeTarget } = await import("@/lib/db/engine");
  const database = await ctx.database();
  const { done, status } = await database.withConnection(async (c) => {
    const done = await applyMigrations(c);
    return { done, status: await migrationStatus(c) };
  });
  for (const name of done) ctx.out(`applied ${name}`);
  ctx.out(
    `${describeTarget(database.target)}: ${count(done.length, "migration")} applied, ${status.applied.length} in total, ${status.pending.length} pending`,
  );
  return 0;
}

/** `npm run apikey -- --user <email> --name <name> [--scope chat,memory:read] [--project <name>]`: prints one key. */
async function apiKeyCommand(ctx: CommandContext): Promise<number> {
  const { createApiKey, API_SCOPES } = await import("@/lib/keys/api-keys");
  const { listProjects } = await import("@/lib/projects/projects");
  const email = arg(ctx.args, "--user");
  const name = arg(ctx.args, "--name");
  const scopes = (arg(ctx.args, "--scope") ?? "chat")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const projectName = arg(ctx.args, "--project");
  if (!email || !name) {
    ctx.err(
      "Usage: npm run apikey -- --user <email> --name <name> [--scope chat,memory:read,memory:write] [--project <name>]",
    );
    return 2;
  }
  const unknown = scopes.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
  if (unknown.length) {
    ctx.err(`Unknown scope ${unknown.join(", ")}: use ${API_SCOPES.join(", ")}.`);
    return 2;
  }
  const db = await ctx.db();
  const user = await db.user.findUnique({ where: { email: email.toLowerCase() }, select: { id: true } });
  if (!user) {
    ctx.err(`No user with the email ${email}.`);
    return 1;
  }
  const u = await userContext(db, user.id);
  let projectId: string | null = null;
  if (projectName) {
    const matches = (await listProjects(u)).filter((p) => p.name === projectName);
    if (matches.length !== 1) {
      ctx.err(
        matches.length ? `${matches.length} projects are named ${projectName}.` : `No project named ${projectName}.`,
      );
      return 1;
    }
    projectId = matches[0].id;
  }
  const made = await createApiKey(u, { name, scopes: scopes as never, projectId });
  ctx.out(made.key);
  return 0;
}

export const COMMANDS = {
  apikey: { startup: true, run: apiKeyCommand },
  import: { startup: true, usage: importUsage, run: importCommand },
  "memory:embed": { startup: true, run: embedCommand },
  "jobs:retention": { startup: false, run: retentionCommand },
  "jobs:consolidate": { startup: false, run: consolidateCommand },
  "keys:rotate": { startup: false, run: rotateCommand },
  worker: { startup: true, run: workerOnceCommand },
  "db:migrate": { startup: false, run: migrateCommand },
} satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;
export const COMMAND_NAMES = Object.keys(COMMANDS) as [CommandName, ...CommandName[]];
