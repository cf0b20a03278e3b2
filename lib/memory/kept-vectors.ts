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
import {
  bestOf,
  dot,
  normalized,
  SHORTLIST_MIN_DIMS,
  signsOf,
  type SlotScan,
  type SlotScores,
  type VectorHit,
} from "./vector-scores";

export type VectorSet = {
  ids: string[];
  threadIds: string[];
  /** Each kept row's "vectorSeq" as read ("-" when it has none: stored before it existed). */
  seqs: string[];
  /**
   * Row i's vector at i * dims, normalized; room past the last row for the ones stored next. In shared memory, with
   * row i's thread as a number (`threadNumbers`) in `threads`: the encoder's worker scans them (`startPrescan`).
   */
  data: Float32Array;
  threads: Int32Array;
  /** Row i's signs (`signsOf`, a bit per number) at i * signWords(dims), for the scans' shortlist; null for short vectors. */
  signs: Int32Array | null;
  threadNumbers: Map<string, number>;
  slots: Map<string, number>;
  /** The user's rows of this model with no vector of this size (another size, or none), and their "vectorSeq". */
  others: Map<string, string>;
  /** The newest "vectorSeq" kept; where the next read of changes starts; when all ids were last compared. */
  newest: string | null;
  horizon: string;
  checkedAt: number;
  /** Counts the changes to the rows; the ids changed (put or dropped), by count, since `logFloor` at least. */
  gen: number;
  log: Array<[number, string]>;
  logFloor: number;
  /** A worker's scan under way: changes wait for it (it reads the rows where they are). */
  reading: Promise<void> | null;
};

/** Changes logged per kept set: a scan is merged with those made since it started (one turn's, usually a few). */
const LOG_KEPT = 1024;

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
  if (kept?.reading) await kept.reading;
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
    ...room(rows.filter((r) => r.embedding).length, dims),
    threadNumbers: new Map(),
    slots: new Map(),
    others: new Map(),
    newest: null,
    horizon,
    checkedAt,
    gen: 0,
    log: [],
    logFloor: 0,
    reading: null,
  };
  for (const r of rows) put(set, r, dims);
  set.newest = newest(rows.map((r) => r.seq));
  // A scan starts after this: the rows read now need no log.
  set.log = [];
  set.logFloor = set.gen;
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
  // The same stamp is the same vector (read again: stamped at the horizon); only a change is logged.
  if (slot === undefined || set.seqs[slot] !== r.seq || set.threadIds[slot] !== r.threadId) changed(set, r.id);
  if (slot === undefined) {
    slot = set.ids.length;
    set.slots.set(r.id, slot);
    set.ids.push(r.id);
    set.threadIds.push(r.threadId);
    set.seqs.push(r.seq);
    if ((slot + 1) * dims > set.data.length) {
      // An eighth more room (at least 64 rows): sixteen users of 10,000 vectors already keep about 330 MB.
      const grown = room(Math.max(slot + 64, Math.ceil((set.data.length * 1.125) / dims)), dims);
      grown.data.set(set.data);
      grown.threads.set(set.threads);
      if (set.signs) grown.signs?.set(set.signs);
      Object.assign(set, grown);
    }
  } else {
    set.threadIds[slot] = r.threadId;
    set.seqs[slot] = r.seq;
  }
  set.threads[slot] = threadNumber(set, r.threadId);
  const v = normalized(typeof r.embedding === "string" ? unpackVector(r.embedding) : r.embedding);
  set.data.set(v, slot * dims);
  if (set.signs) signsOf(v, set.signs, slot * signWords(dims));
}

/** Takes a row out; the last row moves into its slot (the order of the kept rows does not matter to the ranking). */
function drop(set: VectorSet, id: string, dims: number) {
  const slot = set.slots.get(id);
  if (slot === undefined) return;
  changed(set, id);
  const last = set.ids.length - 1;
  if (slot !== last) {
    set.data.copyWithin(slot * dims, last * dims, (last + 1) * dims);
    const words = signWords(dims);
    set.signs?.copyWithin(slot * words, last * words, (last + 1) * words);
    set.threads[slot] = set.threads[last];
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

/** Room for `rows` vectors, their threads and their signs, in memory a worker can read. */
function room(rows: number, dims: number): Pick<VectorSet, "data" | "threads" | "signs"> {
  const ints = (n: number) => new Int32Array(new SharedArrayBuffer(n * Int32Array.BYTES_PER_ELEMENT));
  return {
    data: new Float32Array(new SharedArrayBuffer(rows * dims * Float32Array.BYTES_PER_ELEMENT)),
    threads: ints(rows),
    signs: dims >= SHORTLIST_MIN_DIMS ? ints(rows * signWords(dims)) : null,
  };
}

/** The ints a row's signs take. */
const signWords = (dims: number) => Math.ceil(dims / 32);

/** A thread's number in the kept set (given in order, never reused). */
function threadNumber(set: VectorSet, threadId: string): number {
  let n = set.threadNumbers.get(threadId);
  if (n === undefined) set.threadNumbers.set(threadId, (n = set.threadNumbers.size));
  return n;
}

/** Logs a row's change, for the scans started before it (`mergePrescan`). */
function changed(set: VectorSet, id: string) {
  set.log.push([++set.gen, id]);
  if (set.log.length > LOG_KEPT) {
    const cut = set.log.length - LOG_KEPT / 2;
    set.logFloor = set.log[cut - 1][0];
    set.log = set.log.slice(cut);
  }
}

/**
 * A search by meaning started with the question: the encoder's worker scans the kept rows as they are when it starts,
 * while the turn's first read runs (on PGlite, the main thread's engine), and the rows changed by that read are
 * merged in after (`mergePrescan`). Until the worker answers, the kept set's changes wait. Null when the instance
 * keeps none of the user's vectors of this model, or a scan of them is under way.
 */
export function startPrescan(
  db: Db,
  userId: string,
  model: string,
  excludeThreadId: string | null,
  opts: { k: number; timeoutMs: number },
): { request: SlotScan; settle: (r: SlotScores | null) => void; result: () => Prescan | null } | null {
  const dims = keptDims(db, userId, model);
  const set = dims && caches.get(db)?.get(keyOf(userId, model, dims));
  if (!dims || !set || set.reading) return null;
  const gen = set.gen;
  const threadsThen = set.threadNumbers.size;
  const exclude = excludeThreadId === null ? -1 : (set.threadNumbers.get(excludeThreadId) ?? -1);
  let release = () => {};
  set.reading = new Promise<void>((resolve) => (release = resolve));
  let done: Prescan | null | undefined;
  // The worker's answer is the safety net's to wait for: after it, changes go on and a late answer is dropped.
  const timer = setTimeout(() => settle(null), opts.timeoutMs);
  timer.unref?.();
  const settle = (r: SlotScores | null) => {
    if (done !== undefined) return;
    clearTimeout(timer);
    // Ids by slot as the worker saw them: no change was made meanwhile (they waited), unless the wait ran out.
    done = r && set.gen === gen ? { set, gen, k: opts.k, exclude, threadsThen, hits: hitsOf(set, r) } : null;
    set.reading = null;
    release();
  };
  const request = {
    data: set.data,
    threads: set.threads,
    signs: set.signs,
    rows: set.ids.length,
    dims,
    k: opts.k,
    exclude,
  };
  return { request, settle, result: () => done ?? null };
}

/** A worker's scan, by id (see `startPrescan`). */
export type Prescan = {
  set: VectorSet;
  gen: number;
  k: number;
  /** The thread number skipped, and how many threads had numbers then. */
  exclude: number;
  threadsThen: number;
  hits: VectorHit[];
};

const hitsOf = (set: VectorSet, r: SlotScores): VectorHit[] =>
  r.slots.map((slot, i) => ({ id: set.ids[slot], score: r.scores[i] }));

/**
 * The exact top-k of the kept set now, from a scan of it as it was (`startPrescan`): the scan's rows that did not
 * change since, and the changed rows scored again. The same rows and scores as scanning the whole set (the scan keeps
 * every row at or above its k-th best, so while no more of those changed than it kept beyond k, no row it left out
 * can rank in); null when that cannot be told (the scan is of another set or thread, or too much changed).
 */
export function mergePrescan(
  set: VectorSet,
  p: Prescan,
  q: number[],
  k: number,
  excludeThreadId?: string,
): VectorHit[] | null {
  if (p.set !== set || p.gen < set.logFloor || q.length * set.ids.length > set.data.length) return null;
  // The thread skipped must be the one the scan skipped, or one with no rows then.
  const number = excludeThreadId === undefined ? -1 : (set.threadNumbers.get(excludeThreadId) ?? -1);
  if (number !== p.exclude && !(p.exclude === -1 && (number === -1 || number >= p.threadsThen))) return null;
  const touched = new Set(set.log.filter(([g]) => g > p.gen).map(([, id]) => id));
  const kept = p.hits.filter((h) => !touched.has(h.id));
  const whole = p.hits.length < p.k;
  if (!whole && kept.length < k) return null;
  const qn = normalized(q);
  const ids = kept.map((h) => h.id);
  const scores = kept.map((h) => h.score);
  for (const id of touched) {
    const slot = set.slots.get(id);
    if (slot === undefined || set.threadIds[slot] === excludeThreadId) continue;
    ids.push(id);
    scores.push(dot(set.data, qn, slot * q.length));
  }
  const all = Float64Array.from(scores);
  return bestOf(ids, all, k).map((i) => ({ id: ids[i], score: all[i] }));
}

/**
 * A vector size as SQL text: a type modifier (`vector(1536)`) cannot be a parameter, and a partial index's
 * predicate matches only a literal.
 */
export function dimsSql(dims: number): Prisma.Sql {
  if (!Number.isInteger(dims) || dims <= 0) throw new Error(`not a vector size: ${dims}`);
  return Prisma.raw(String(dims));
}
