// The message vectors an app instance keeps in memory for the exact search (lib/memory/vectors.ts, PGlite or
// PostgreSQL without pgvector): one Float32Array per user, model and size, brought up to date each turn by reading
// only what changed. Every write of a message's vector (or of its model, or its thread) stamps the row with the
// writing transaction ("vectorSeq", trigger "Item_vector_seq"), and every deleted one leaves its id in ItemVectorGone.
// The turn's batched read brings what was stamped at or after the kept set's horizon (the oldest transaction still
// open at its last read: one that commits late is seen all the same), so no read grows with the user's history:
// - nothing changed: nothing but the horizon;
// - vectors stored since: those rows (the usual turn: its own message's and answer's vectors);
// - messages deleted, or their vectors taken away: their ids, dropped.
// Every few minutes the ids and stamps of all the user's rows are compared too (no vector read), as a safety net.
// Every vector is read only when the instance first needs the user's (1.4 s for 10,000 on PGlite, measured).
import type { Db } from "@/lib/db/types";
import { callFunction } from "@/lib/db/function-calls";
import { Prisma } from "@/lib/generated/prisma/client";
import { packedVector, unpackVector } from "@/lib/db/packed-vectors";

export type VectorSet = {
  ids: string[];
  threadIds: string[];
  /** Each kept row's "vectorSeq" as read ("-" when it has none: stored before it existed). */
  seqs: string[];
  /** Row i's vector at i * dims, normalized; room past the last row for the ones stored next. */
  data: Float32Array;
  slots: Map<string, number>;
  /** The user's rows of this model with no vector of this size (another size, or none), and their "vectorSeq". */
  others: Map<string, string>;
  /** The newest "vectorSeq" kept; where the next read of changes starts; when all ids were last compared. */
  newest: string | null;
  horizon: string;
  checkedAt: number;
};

const CACHED_USERS = 16;
/** The ids are compared after this long, whatever the changes say (cheap: no vector is read). */
const CHECK_MS = 5 * 60_000;
const caches = new WeakMap<Db, Map<string, VectorSet>>();
/** One update at a time per kept set: two turns of one user never apply reads in the wrong order. */
const updates = new WeakMap<Db, Map<string, Promise<unknown>>>();

/** A row's vector as the changes' read brings it (numbers), or packed as the bulk reads bring it. */
type VectorRow = { id: string; threadId: string; seq: string; embedding: number[] | string | null };
type ChangeRow = VectorRow & { kind: "mark" | "new" | "held" | "other" | "gone" };

/** What changed since a kept set's horizon and newest (`from`), as read; all of it when `complete`. */
type Changes = { from: string | null; horizon: string; rows: ChangeRow[]; complete: boolean };
/** More changes than this are read by themselves, not in the turn's batched read. */
const CHANGES_IN_BATCH = 64;

const keyOf = (userId: string, model: string, dims: number) => `${userId}\u0000${model}\u0000${dims}`;
const fromOf = (set: VectorSet | undefined) => (set ? `${set.horizon}/${set.newest}` : null);

/** The user's message vectors for this model and size, as of the turn's batched read at least. */
export async function messageVectors(db: Db, userId: string, model: string, dims: number): Promise<VectorSet> {
  const key = keyOf(userId, model, dims);
  const kept = caches.get(db)?.get(key);
  // In the turn's batched read (lib/db/function-calls.ts).
  const changes = await readChanges(db, userId, model, dims, kept, CHANGES_IN_BATCH + 1);
  let pending = updates.get(db);
  if (!pending) updates.set(db, (pending = new Map()));
  const run = (pending.get(key) ?? Promise.resolve()).then(() => update(db, key, userId, model, dims, changes));
  const settled = run.catch(() => undefined);
  pending.set(key, settled);
  void settled.then(() => pending.get(key) === settled && pending.delete(key));
  return run;
}

/** Whether this instance keeps the user's vectors of this model and size (then a search reads only what changed). */
export const keepsVectors = (db: Db, userId: string, model: string, dims: number) =>
  caches.get(db)?.has(keyOf(userId, model, dims)) ?? false;

/** The size of the user's message vectors of this model this instance keeps (a model makes one size), or null. */
export function keptDims(db: Db, userId: string, model: string): number | null {
  const prefix = keyOf(userId, model, 0).slice(0, -1);
  for (const key of caches.get(db)?.keys() ?? []) if (key.startsWith(prefix)) return Number(key.slice(prefix.length));
  return null;
}

async function readChanges(
  db: Db,
  userId: string,
  model: string,
  dims: number,
  set: VectorSet | undefined,
  limit: number | null,
): Promise<Changes> {
  const rows = await callFunction<ChangeRow>(db, {
    call: "mnemo_message_vector_changes($1, $2, $3, $4, $5::int, $6::int)",
    params: [userId, model, set?.horizon ?? null, set?.newest ?? null, dims, limit],
  });
  const changed = rows.filter((r) => r.kind !== "mark");
  const gone = changed.filter((r) => r.kind === "gone").length;
  return {
    from: fromOf(set),
    horizon: rows.find((r) => r.kind === "mark")!.seq,
    rows: changed,
    // The function stops each list at `limit`: a full one may have more.
    complete: limit === null || (gone < limit && changed.length - gone < limit),
  };
}

async function update(db: Db, key: string, userId: string, model: string, dims: number, changes: Changes) {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const kept = cache.get(key);
  const set =
    (kept && (await bringUp(db, kept, userId, model, dims, changes))) ||
    (await readAll(db, userId, model, dims, changes.horizon));
  cache.delete(key);
  cache.set(key, set); // most recently used last
  while (cache.size > CACHED_USERS) cache.delete(cache.keys().next().value!);
  return set;
}

/**
 * The kept set brought up to the changes read (again by themselves when the batched read did not bring them all, or
 * read for another state of the set: another turn's update came first); false when its ids could not be compared
 * (then every vector is read).
 */
async function bringUp(db: Db, set: VectorSet, userId: string, model: string, dims: number, changes: Changes) {
  if (Date.now() - set.checkedAt > CHECK_MS) return (await compareIds(db, set, userId, model, dims, changes)) && set;
  const ch =
    changes.complete && changes.from === fromOf(set) ? changes : await readChanges(db, userId, model, dims, set, null);
  const missing: string[] = [];
  for (const r of ch.rows) {
    if (r.kind === "gone" || r.kind === "other") forget(set, r.id, dims);
    else if (r.kind === "new") put(set, r, dims);
    else if (!holds(set, r)) missing.push(r.id); // "held": stamped before the newest kept, committed after
  }
  if (missing.length) for (const r of await readRows(db, userId, model, dims, byIds(missing))) put(set, r, dims);
  set.newest = newest([set.newest ?? "-", ...ch.rows.filter((r) => r.kind === "new").map((r) => r.seq)]);
  set.horizon = ch.horizon;
  return set;
}

const byIds = (ids: string[]) => Prisma.sql`id = ANY(${ids}::text[])`;

/** Whether the set keeps this version of the row (its vector, or that it has none of this size). */
const holds = (set: VectorSet, r: VectorRow) =>
  set.slots.has(r.id) ? set.seqs[set.slots.get(r.id)!] === r.seq : set.others.get(r.id) === r.seq;

function forget(set: VectorSet, id: string, dims: number) {
  drop(set, id, dims);
  set.others.delete(id);
}

/** Every row of the user's for this model: its vector when it has one of this size. */
function readRows(db: Db, userId: string, model: string, dims: number, where: Prisma.Sql) {
  return db.$queryRaw<VectorRow[]>`
    SELECT id, "threadId", coalesce("vectorSeq"::text, '-') AS seq,
           CASE WHEN array_length(embedding, 1) = ${dimsSql(dims)} THEN ${packedVector("embedding")} END AS embedding
      FROM "Item" WHERE "userId" = ${userId} AND "embeddingModel" = ${model} AND ${where}
  `;
}

/** Every vector of the user's; `horizon` was read before them (what committed between is read again next time). */
async function readAll(db: Db, userId: string, model: string, dims: number, horizon: string): Promise<VectorSet> {
  const checkedAt = Date.now();
  const rows = await readRows(db, userId, model, dims, Prisma.sql`TRUE`);
  const set: VectorSet = {
    ids: [],
    threadIds: [],
    seqs: [],
    data: new Float32Array(rows.filter((r) => r.embedding).length * dims),
    slots: new Map(),
    others: new Map(),
    newest: null,
    horizon,
    checkedAt,
  };
  for (const r of rows) put(set, r, dims);
  set.newest = newest(rows.map((r) => r.seq));
  return set;
}

/**
 * Compares the kept rows with the user's ids and "vectorSeq" (no vector read): drops the rows gone or stored again,
 * then reads those missing. False when the user has no such rows left to compare (nothing to keep).
 */
async function compareIds(db: Db, set: VectorSet, userId: string, model: string, dims: number, changes: Changes) {
  const checkedAt = Date.now();
  const [row] = await db.$queryRaw<Array<{ rows: string | null }>>`
    SELECT string_agg(id || ' ' || coalesce("vectorSeq"::text, '-'), ',') AS rows
      FROM "Item" WHERE "userId" = ${userId} AND "embeddingModel" = ${model}
  `;
  const present = new Map((row?.rows ? row.rows.split(",") : []).map((p) => p.split(" ") as [string, string]));
  if (!present.size) return false;
  for (const id of set.ids.filter((id) => present.get(id) !== set.seqs[set.slots.get(id)!])) drop(set, id, dims);
  for (const [id, seq] of set.others) if (present.get(id) !== seq) set.others.delete(id);
  const missing = [...present.keys()].filter((id) => !set.slots.has(id) && !set.others.has(id));
  if (missing.length) for (const r of await readRows(db, userId, model, dims, byIds(missing))) put(set, r, dims);
  set.newest = newest([...present.values(), set.newest ?? "-"]);
  // The batched read's horizon came before this read: what committed between is read again next time.
  set.horizon = changes.horizon;
  set.checkedAt = checkedAt;
  return true;
}

/**
 * Deleted messages' ids older than an hour (the sweeper's): a set unchecked for that long compares every id anyway
 * (CHECK_MS).
 */
export async function pruneGoneVectors(db: Db): Promise<number> {
  return db.$executeRaw`DELETE FROM "ItemVectorGone" WHERE at < timezone('UTC', now()) - interval '1 hour'`;
}

/** The largest of some "vectorSeq" texts ("-": none). */
function newest(seqs: string[]): string | null {
  let best: bigint | null = null;
  for (const s of seqs) if (s !== "-" && (best === null || BigInt(s) > best)) best = BigInt(s);
  return best === null ? null : String(best);
}

/** Sets a row in the set: its vector in its slot (a new one after the last row), or among the others. */
function put(set: VectorSet, r: VectorRow, dims: number) {
  if (!r.embedding) {
    if (set.slots.has(r.id)) drop(set, r.id, dims);
    set.others.set(r.id, r.seq);
    return;
  }
  set.others.delete(r.id);
  let slot = set.slots.get(r.id);
  if (slot === undefined) {
    slot = set.ids.length;
    set.slots.set(r.id, slot);
    set.ids.push(r.id);
    set.threadIds.push(r.threadId);
    set.seqs.push(r.seq);
    if ((slot + 1) * dims > set.data.length) {
      // An eighth more room (at least 64 rows): sixteen users of 10,000 vectors already keep about 330 MB.
      const grown = new Float32Array(Math.max((slot + 64) * dims, Math.ceil((set.data.length * 1.125) / dims) * dims));
      grown.set(set.data);
      set.data = grown;
    }
  } else {
    set.threadIds[slot] = r.threadId;
    set.seqs[slot] = r.seq;
  }
  set.data.set(normalized(typeof r.embedding === "string" ? unpackVector(r.embedding) : r.embedding), slot * dims);
}

/** Takes a row out; the last row moves into its slot (the order of the kept rows does not matter to the ranking). */
function drop(set: VectorSet, id: string, dims: number) {
  const slot = set.slots.get(id);
  if (slot === undefined) return;
  const last = set.ids.length - 1;
  if (slot !== last) {
    set.data.copyWithin(slot * dims, last * dims, (last + 1) * dims);
    set.ids[slot] = set.ids[last];
    set.threadIds[slot] = set.threadIds[last];
    set.seqs[slot] = set.seqs[last];
    set.slots.set(set.ids[slot], slot);
  }
  set.slots.delete(id);
  set.ids.pop();
  set.threadIds.pop();
  set.seqs.pop();
}

/** A vector scaled to length 1 (all zeros stays all zeros). */
export function normalized(v: ArrayLike<number>): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * s;
  return out;
}

/**
 * A vector size as SQL text: a type modifier (`vector(1536)`) cannot be a parameter, and a partial index's
 * predicate matches only a literal.
 */
export function dimsSql(dims: number): Prisma.Sql {
  if (!Number.isInteger(dims) || dims <= 0) throw new Error(`not a vector size: ${dims}`);
  return Prisma.raw(String(dims));
}
