// The user's memory vectors kept in the app between turns (by row version, bounded), and what ranks them: the exact
// search ranks every memory from them; with pgvector, the memories of a user with few unread vectors are ranked from
// them too (more are read in the background), and the last turn's qualified memories give the guess that lets the
// memories found by meaning be read beside the search (./vectors.ts, nearestToQuestion).
import type { Db } from "@/lib/db/types";
import { callFunction } from "@/lib/db/function-calls";
import { packedVector, unpackVector } from "@/lib/db/packed-vectors";
import { bestOf, dot, normalized, type VectorHit } from "./vector-scores";

/** Memory vectors kept between turns, by row version; bounded (20,000 of 512 floats: about 40 MB). */
const MEMORY_VECTORS_KEPT = 20_000;
type KeptMemoryVector = { version: string; vector: Float32Array };
const memoryCaches = new WeakMap<Db, Map<string, KeptMemoryVector>>();

/**
 * The nearest of the memories whose vectors have the question's size, each scored where it is kept: copying 1,000 of
 * them into one array first cost 0.5 ms a turn, and 8 ms at p95 as the copies were collected.
 */
export function scanMemories(rows: Array<{ id: string; vector: Float32Array }>, q: number[], k: number): VectorHit[] {
  const qn = normalized(q);
  const scores = Float64Array.from(rows, (r) => (r.vector.length === qn.length ? dot(r.vector, qn) : -Infinity));
  const ids = rows.map((r) => r.id);
  return bestOf(ids, scores, k).map((i) => ({ id: ids[i], score: scores[i] }));
}

/** Memory vectors read in a turn past which pgvector ranks them for this turn, while they are read in the background. */
export const MEMORY_READ_LIMIT = 256;
/** Users whose memory vectors are being read in the background (one read each at a time). */
const filling = new Set<string>();
/** Background reads at once across users: a burst of users with many unread vectors must not take every connection. */
const FILLS_AT_ONCE = 2;
/** Vectors per background read: one user's thousands are read in slices, each a short query. */
const FILL_SLICE = 1_000;

/**
 * The user's memories that recall may use, with their vectors (of any size). Which memories qualify (active, not
 * muted, not expired) is asked of the database every time; only the vectors of rows unchanged since (the same
 * version: the transaction that wrote the vector) come from memory instead of being read and parsed again.
 * Null when more than `maxRead` would have to be read first: they are read in the background for the next turn.
 */
export async function keptMemoryVectors(db: Db, userId: string, model: string, maxRead: number) {
  let cache = memoryCaches.get(db);
  if (!cache) memoryCaches.set(db, (cache = new Map()));
  const key = `${userId} ${model}`;
  const known = lastQualified.get(db)?.byUser.get(key);
  // In the turn's batched read: when no memory changed, the search makes no round trip of its own, and when the
  // list is the one kept (its digest, the first row), the list itself is not sent again.
  const read = await callFunction<{ id: string | null; version: string }>(db, {
    call: "mnemo_memory_vector_versions($1, $2, $3)",
    params: [userId, model, known?.digest ?? null],
  });
  const digest = read.find((r) => r.id === null)!.version;
  const listed = read.filter((r): r is QualifiedRow => r.id !== null);
  const rows = known && digest === known.digest && !listed.length ? known.rows : listed;
  rememberQualified(db, key, { digest, rows });
  const missing = rows.filter((r) => cache.get(r.id)?.version !== r.version).map((r) => r.id);
  if (missing.length > maxRead) {
    fillInBackground(db, cache, key, missing);
    return null;
  }
  if (missing.length) await readMemoryVectors(db, cache, missing);
  // A row changed between the two reads is left out of this turn (its vector is not the one the filter saw).
  return rows.flatMap((r) => {
    const hit = cache.get(r.id);
    return hit?.version === r.version ? [{ id: r.id, vector: hit.vector }] : [];
  });
}

/**
 * Reads a user's unread memory vectors for later turns, unless that user's read is running, two others are, or they
 * would not fit the kept set (then pgvector keeps ranking them). A skipped fill is tried again at the next turn.
 */
function fillInBackground(db: Db, cache: Map<string, KeptMemoryVector>, key: string, ids: string[]) {
  if (filling.has(key) || filling.size >= FILLS_AT_ONCE || ids.length > MEMORY_VECTORS_KEPT) return;
  filling.add(key);
  const slices = async () => {
    for (let i = 0; i < ids.length; i += FILL_SLICE) await readMemoryVectors(db, cache, ids.slice(i, i + FILL_SLICE));
  };
  void slices()
    .catch(() => undefined)
    .finally(() => filling.delete(key));
}

/** How many background reads of memory vectors are running (for tests). */
export const memoryVectorFills = () => filling.size;

async function readMemoryVectors(db: Db, cache: Map<string, KeptMemoryVector>, ids: string[]) {
  const fresh = await db.$queryRaw<Array<{ id: string; version: string; embedding: string }>>`
    SELECT id, coalesce("vectorSeq"::text, 'x' || xmin::text) AS version, ${packedVector("embedding")} AS embedding
      FROM "Memory" WHERE id = ANY(${ids}::text[]) AND embedding IS NOT NULL
  `;
  for (const r of fresh) {
    cache.delete(r.id);
    cache.set(r.id, { version: r.version, vector: normalized(unpackVector(r.embedding)) });
  }
  while (cache.size > MEMORY_VECTORS_KEPT) cache.delete(cache.keys().next().value!);
}

/** A memory recall may search by meaning, and its vector's version (mnemo_memory_vector_versions). */
type QualifiedRow = { id: string; version: string };
/**
 * The memories each user's last search qualified (by user and model) and the database's digest of that list: the next
 * turn's guess, and the list the next search reuses when the digest has not changed. At most as many rows in all as
 * vectors are kept (a guess needs the vector too), the users least recently searched going first.
 */
const lastQualified = new WeakMap<Db, { byUser: Map<string, Qualified>; ids: number }>();
type Qualified = { digest: string; rows: QualifiedRow[] };

/**
 * The memories the ranking will most likely return: the nearest of those the user's last search qualified, by the
 * vectors kept for them. The ranking itself still waits for what qualifies now; a memory it finds that the guess
 * missed is read after it (one more round trip), so a wrong guess costs time, never a memory.
 */
export function guessMemories(db: Db, userId: string, q: { model: string; vector: number[] }, k: number): Guess {
  const ids = lastQualified
    .get(db)
    ?.byUser.get(`${userId} ${q.model}`)
    ?.rows.map((r) => r.id);
  const cache = memoryCaches.get(db);
  if (!ids || !cache) return { rows: [], hits: [] };
  const rows = ids.flatMap((id) => {
    const kept = cache.get(id);
    return kept ? [{ id, vector: kept.vector }] : [];
  });
  return { rows, hits: scanMemories(rows, q.vector, k) };
}
/** A guess: the kept rows it ranked, and their nearest. */
export type Guess = { rows: Array<{ id: string; vector: Float32Array }>; hits: VectorHit[] };

/**
 * The nearest of `rows`: the guess's own ranking when it ranked the same vectors (nothing changed since the last
 * search, the usual turn), else a ranking of its own.
 */
export function scanMemoriesAfter(guess: Guess, rows: Guess["rows"], q: number[], k: number): VectorHit[] {
  const same = guess.rows.length === rows.length && rows.every((r, i) => guess.rows[i].vector === r.vector);
  return same ? guess.hits : scanMemories(rows, q, k);
}

function rememberQualified(db: Db, key: string, list: Qualified) {
  let kept = lastQualified.get(db);
  if (!kept) lastQualified.set(db, (kept = { byUser: new Map(), ids: 0 }));
  kept.ids += list.rows.length - (kept.byUser.get(key)?.rows.length ?? 0);
  kept.byUser.delete(key);
  kept.byUser.set(key, list);
  while (kept.ids > MEMORY_VECTORS_KEPT && kept.byUser.size > 1) {
    const [oldest, gone] = kept.byUser.entries().next().value!;
    kept.byUser.delete(oldest);
    kept.ids -= gone.rows.length;
  }
}
