// The message vectors an app instance keeps in memory for the exact search (lib/memory/vectors.ts, PGlite or
// PostgreSQL without pgvector): one Float32Array per user, model and size, brought up to date each turn by reading
// only what changed. Every stored vector carries the transaction that stored it ("vectorSeq"), and the turn's batched
// read carries the user's mark (how many rows, the newest "vectorSeq"):
// - nothing changed: no read at all;
// - vectors stored since: those rows are read (the usual turn: its own message's and answer's vectors);
// - the count still does not add up (a message undone, a chat deleted or moved, a vector stored by a transaction that
//   committed after a newer one was read): the user's ids and their "vectorSeq" are read, not their vectors, and only
//   the rows gone, changed or missing are dropped or read. The same check runs every few minutes whatever the mark
//   says, as a safety net for changes that cancel out in the count.
// Every vector is read only when the instance first needs the user's (1.4 s for 10,000 on PGlite, measured).
import type { Db } from "@/lib/db/types";
import { callFunction } from "@/lib/db/function-calls";
import { Prisma } from "@/lib/generated/prisma/client";

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
  /** The newest "vectorSeq" read, and when every row's id and "vectorSeq" were last compared. */
  seq: string | null;
  checkedAt: number;
};

const CACHED_USERS = 16;
/** The ids are compared after this long, whatever the mark says (cheap: no vector is read). */
const CHECK_MS = 5 * 60_000;
const caches = new WeakMap<Db, Map<string, VectorSet>>();
/** One update at a time per kept set: two turns of one user never apply reads in the wrong order. */
const updates = new WeakMap<Db, Map<string, Promise<unknown>>>();

type Mark = { n: number; m: string | null };
type VectorRow = { id: string; threadId: string; seq: string; embedding: number[] | null };

/** Rows the turn's batched read brings, stored after the kept "vectorSeq" `from`: all of them when `complete`. */
type Since = { from: string | null; rows: VectorRow[]; complete: boolean };
/** More rows than this stored since the kept ones are read by themselves, not in the turn's batched read. */
const SINCE_IN_BATCH = 64;

/** The user's message vectors for this model and size, as of the turn's mark at least. */
export async function messageVectors(db: Db, userId: string, model: string, dims: number): Promise<VectorSet> {
  const key = `${userId}\u0000${model}\u0000${dims}`;
  const from = caches.get(db)?.get(key)?.seq ?? null;
  // In the turn's batched read (lib/db/function-calls.ts): the mark, and the rows stored since the kept ones.
  const rows = await callFunction<Partial<VectorRow> & { n: number | null; m: string | null }>(db, {
    call: "mnemo_message_vectors_since($1, $2, $3, $4::int)",
    params: [userId, model, from, dims],
  });
  const head = rows.find((r) => r.id == null);
  const mark: Mark = { n: head?.n ?? 0, m: head?.m ?? null };
  const stored = rows.filter((r): r is VectorRow & { n: null; m: null } => r.id != null);
  const since: Since = { from, rows: stored, complete: from !== null && stored.length <= SINCE_IN_BATCH };
  let pending = updates.get(db);
  if (!pending) updates.set(db, (pending = new Map()));
  const run = (pending.get(key) ?? Promise.resolve()).then(() => update(db, key, userId, model, dims, mark, since));
  const settled = run.catch(() => undefined);
  pending.set(key, settled);
  void settled.then(() => pending.get(key) === settled && pending.delete(key));
  return run;
}

/** Whether this instance keeps the user's vectors of this model and size (then a search reads only what changed). */
export const keepsVectors = (db: Db, userId: string, model: string, dims: number) =>
  caches.get(db)?.has(`${userId}\u0000${model}\u0000${dims}`) ?? false;

async function update(db: Db, key: string, userId: string, model: string, dims: number, mark: Mark, since: Since) {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const kept = cache.get(key);
  const set =
    (kept && (await bringUp(db, kept, userId, model, dims, mark, since))) || (await readAll(db, userId, model, dims));
  cache.delete(key);
  cache.set(key, set); // most recently used last
  while (cache.size > CACHED_USERS) cache.delete(cache.keys().next().value!);
  return set;
}

const held = (set: VectorSet) => set.ids.length + set.others.size;

/**
 * The kept set brought up to the mark: with the rows stored since that came in the batched read, else read now; false
 * when its ids could not be compared (then every vector is read).
 */
async function bringUp(db: Db, set: VectorSet, userId: string, model: string, dims: number, mark: Mark, since: Since) {
  const due = Date.now() - set.checkedAt > CHECK_MS;
  if (!due && held(set) === mark.n && set.seq === mark.m) return set;
  if (!due && set.seq !== null && mark.m !== null && set.seq !== mark.m) {
    // The batched read's rows are those after the seq this set had then: another turn's update may have moved it.
    const rows =
      since.complete && since.from === set.seq
        ? since.rows
        : await readRows(
            db,
            userId,
            model,
            dims,
            Prisma.sql`"vectorSeq" > ${set.seq}::bigint
            AND "vectorSeq" <= ${mark.m}::bigint`,
          );
    for (const r of rows) put(set, r, dims);
    set.seq = mark.m;
    if (held(set) === mark.n) return set;
  }
  return (await compareIds(db, set, userId, model, dims)) && set;
}

/** Every row of the user's for this model: its vector when it has one of this size. */
function readRows(db: Db, userId: string, model: string, dims: number, where: Prisma.Sql) {
  return db.$queryRaw<VectorRow[]>`
    SELECT id, "threadId", coalesce("vectorSeq"::text, '-') AS seq,
           CASE WHEN array_length(embedding, 1) = ${dimsSql(dims)} THEN embedding END AS embedding
      FROM "Item" WHERE "userId" = ${userId} AND "embeddingModel" = ${model} AND ${where}
  `;
}

async function readAll(db: Db, userId: string, model: string, dims: number): Promise<VectorSet> {
  const checkedAt = Date.now();
  const rows = await readRows(db, userId, model, dims, Prisma.sql`TRUE`);
  const set: VectorSet = {
    ids: [],
    threadIds: [],
    seqs: [],
    data: new Float32Array(rows.filter((r) => r.embedding).length * dims),
    slots: new Map(),
    others: new Map(),
    seq: null,
    checkedAt,
  };
  for (const r of rows) put(set, r, dims);
  set.seq = newest(rows.map((r) => r.seq));
  return set;
}

/**
 * Compares the kept rows with the user's ids and "vectorSeq" (no vector read): drops the rows gone or stored again,
 * then reads those missing. False when the user has no such rows left to compare (nothing to keep).
 */
async function compareIds(db: Db, set: VectorSet, userId: string, model: string, dims: number) {
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
  if (missing.length) {
    for (const r of await readRows(db, userId, model, dims, Prisma.sql`id = ANY(${missing}::text[])`))
      put(set, r, dims);
  }
  set.seq = newest([...present.values(), set.seq ?? "-"]);
  set.checkedAt = checkedAt;
  return true;
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
  set.data.set(normalized(r.embedding), slot * dims);
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
