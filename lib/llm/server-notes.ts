// What Mnemo learned about a model server from how it answered: a feature it refuses (server-quirks.ts), the prompt
// size it reads whole and usage counts not to trust (prompt-limits.ts). Every app instance shares it through the
// ModelServerNote table: with several instances behind a load balancer, each one otherwise learned it again by
// failing once, or, from a server that cuts long prompts silently (Ollama), by answering once without the user's
// memories. The checks run on every model call and are synchronous, so each process keeps its own copy: a note it
// learns is written at once, and the notes others learned are read with the connection (every few seconds while
// the model is used; lib/llm/connection.ts).
import type { Db } from "@/lib/db/client";

/** How long a note is trusted: a server can be upgraded, or given a longer context, without restarting Mnemo. */
export const NOTE_TTL_MS = 60 * 60 * 1000;

export type NoteKind = `refused:${string}` | "promptLimit" | "untrustedUsage";
type Note = { tokens: number | null; at: number };
/** The marker the admin's save leaves (server "*"): every note before it is forgotten, in every instance. */
const FORGOTTEN = "forgotten";

// On globalThis: Next.js bundles route handlers, server actions and the job worker as separate module instances of
// one process, and what one learns holds for all.
type State = {
  notes: Map<string, Note>;
  /** Per group of kinds, when this process last forgot it: older notes read from the table are not taken back. */
  forgottenAt: Map<string, number>;
  /** Notes learned here and not yet written. */
  outbox: Array<{ server: string; kind: string } & Note>;
  /** The database to write to, once a sync has named it. */
  db: Db | null;
};
const g = globalThis as typeof globalThis & { __mnemoServerNotes?: State };
const state: State = (g.__mnemoServerNotes ??= { notes: new Map(), forgottenAt: new Map(), outbox: [], db: null });
const id = (server: string, kind: string) => `${kind} ${server}`;
const group = (kind: string) => kind.split(":")[0];

/** The note on this server (and model) of this kind, if learned within the last hour. */
export function readNote(server: string, kind: NoteKind): Note | null {
  const n = state.notes.get(id(server, kind));
  if (!n) return null;
  if (Date.now() - n.at < NOTE_TTL_MS) return n;
  state.notes.delete(id(server, kind));
  return null;
}

/** Learns a note here and shares it (`tokens` null: the kind's value is forgotten for this server). */
export function writeNote(server: string, kind: NoteKind, tokens: number | null = null): void {
  const note = { tokens, at: Date.now() };
  state.notes.set(id(server, kind), note);
  state.outbox.push({ server, kind, ...note });
  if (state.db) void flush(state.db);
}

/**
 * Forgets, in this process, the notes of these kinds' groups ("refused", "promptLimit", "untrustedUsage") learned
 * up to `at` (now, or the time of the admin's save another instance saw); one learned since stays.
 */
export function forgetLocally(groups: string[], at = Date.now()): void {
  const before = (kind: string, noteAt: number) => groups.includes(group(kind)) && noteAt <= at;
  for (const [key, n] of state.notes) if (before(key.split(" ")[0], n.at)) state.notes.delete(key);
  for (const gr of groups) state.forgottenAt.set(gr, Math.max(at, state.forgottenAt.get(gr) ?? 0));
  state.outbox = state.outbox.filter((n) => !before(n.kind, n.at));
}

const ALL_GROUPS = ["refused", "promptLimit", "untrustedUsage"];

/** The admin saved the model settings: every instance tries the server afresh. */
export async function forgetEverywhere(db: Db): Promise<void> {
  const at = Date.now();
  forgetLocally(ALL_GROUPS, at);
  await db.$transaction([
    db.$executeRaw`DELETE FROM "ModelServerNote" WHERE kind <> ${FORGOTTEN}`,
    db.$executeRaw`INSERT INTO "ModelServerNote" (server, kind, tokens, at) VALUES ('*', ${FORGOTTEN}, NULL, ${new Date(at)}::timestamp)
      ON CONFLICT (server, kind) DO UPDATE SET at = GREATEST("ModelServerNote".at, EXCLUDED.at)`,
  ]);
}

/** Writes what this process learned and takes what the others did (newer notes win). */
export async function syncNotes(db: Db): Promise<void> {
  state.db = db;
  await flush(db);
  const rows = await db.$queryRaw<Array<{ server: string; kind: string; tokens: number | null; at: Date }>>`
    SELECT server, kind, tokens, at FROM "ModelServerNote" WHERE at > ${new Date(Date.now() - NOTE_TTL_MS)}::timestamp`;
  const marker = rows.find((r) => r.kind === FORGOTTEN);
  if (marker) forgetLocally(ALL_GROUPS, marker.at.getTime());
  for (const r of rows) {
    const at = r.at.getTime();
    const mine = state.notes.get(id(r.server, r.kind));
    if (r.kind === FORGOTTEN || at <= (state.forgottenAt.get(group(r.kind)) ?? 0) || (mine && mine.at >= at)) continue;
    state.notes.set(id(r.server, r.kind), { tokens: r.tokens, at });
  }
}

async function flush(db: Db): Promise<void> {
  const out = state.outbox.splice(0);
  try {
    for (const n of out)
      await db.$executeRaw`INSERT INTO "ModelServerNote" (server, kind, tokens, at)
        VALUES (${n.server}, ${n.kind}, ${n.tokens}::int, ${new Date(n.at)}::timestamp)
        ON CONFLICT (server, kind) DO UPDATE SET tokens = EXCLUDED.tokens, at = EXCLUDED.at
        WHERE "ModelServerNote".at < EXCLUDED.at`;
  } catch {
    // The database is away: the notes still hold here, and go out with the next sync.
    state.outbox.unshift(...out);
  }
}
