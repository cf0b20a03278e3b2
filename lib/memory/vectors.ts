// Nearest neighbours of a question's embedding among one user's memories and
// messages, by cosine similarity. A VectorIndex (mem0's VectorStore is the
// model) is chosen once per database, at its first use, by what the database
// can do:
// - PgvectorIndex, PostgreSQL with pgvector: the database ranks (`<=>`).
//   Messages use an HNSW index per vector size (created when the first vector
//   of that size is stored), holding each vector once, with iterative scans so
//   the per-user filter still yields k rows; a user's copies of a vector, and
//   all the rows of a user with fewer than k, are ranked exactly. Recall's
//   search is filtered to the threads it may read, and reads its hits'
//   neighbours in the same call (mnemo_nearest_passages).
// - ExactScanIndex, PGlite or PostgreSQL without pgvector: an exact scan in the
//   app. The user's message vectors are kept in memory between turns
//   (./kept-vectors.ts), read again only where the stored rows changed.
import type { Db } from "@/lib/db/types";
import { callFunction } from "@/lib/db/function-calls";
import { Prisma } from "@/lib/generated/prisma/client";
import { packedVector, unpackVector } from "@/lib/db/packed-vectors";
import { dimsSql, keptDims, messageVectors, normalized, type VectorSet } from "./kept-vectors";
import { PASSAGE_DATES, type NeighborRow } from "./recall-passages";
import { retentionCutoff } from "@/lib/account/retention";
import { scopeParams, type MemoryScope } from "@/lib/projects/scope";

export type VectorHit = { id: string; score: number };
/** Which vector hits are read with their neighbours: the passage filters of a scope, `n` either side, the first `limit`. */
export type PassageReach = { scope: MemoryScope; n: number; limit: number };
/** Message hits, with their passages when the search read them too (else null: the caller reads them). */
export type MessageHits = { hits: VectorHit[]; rows: NeighborRow[] | null };

export interface VectorIndex {
  readonly kind: "pgvector" | "exact";
  /** The user's active memories nearest to `q` (only those embedded by `model`). */
  nearestMemories(userId: string, model: string, q: number[], k: number): Promise<VectorHit[]>;
  /**
   * The user's messages nearest to `q`, best first, outside `excludeThreadId` (the thread being answered, whose history
   * the prompt has already); the other thread filters are applied by the caller's passage query.
   */
  nearestMessages(
    userId: string,
    model: string,
    q: number[],
    k: number,
    excludeThreadId?: string,
  ): Promise<VectorHit[]>;
  /** Prepares for vectors of this size (an index where the engine has one; once per size). */
  prepare(dims: number): Promise<void>;
}

const chosen = new WeakMap<Db, Promise<VectorIndex>>();

/** The database's vector index, chosen once: pgvector when the extension is installed, else the exact scan. */
export function vectorIndex(db: Db): Promise<VectorIndex> {
  let p = chosen.get(db);
  if (!p) {
    p = db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'`
      .then((r) => r[0]?.n > 0)
      .catch(() => false)
      .then((pgvector): VectorIndex => (pgvector ? new PgvectorIndex(db) : new ExactScanIndex(db)));
    chosen.set(db, p);
  }
  return p;
}

/** Whether this database ranks with pgvector. */
export const hasPgvector = async (db: Db) => (await vectorIndex(db)).kind === "pgvector";

export async function nearestMemories(db: Db, userId: string, model: string, q: number[], k: number) {
  return (await vectorIndex(db)).nearestMemories(userId, model, q, k);
}

export async function nearestMessages(
  db: Db,
  userId: string,
  model: string,
  q: number[],
  k: number,
  excludeThreadId?: string,
) {
  return (await vectorIndex(db)).nearestMessages(userId, model, q, k, excludeThreadId);
}

/** A question's vector, when it comes (null: the endpoint failed or timed out; recall goes on by words). */
export type QuestionVector = Promise<{ model: string; vector: number[] } | null>;

/**
 * The memories and messages nearest to a question's vector, which may still be coming. Reads that need the model
 * (`model`, known before the vector) and not the vector go out at once, with the turn's other reads; only the ranking
 * waits for the vector:
 * - the memories, on every engine: a user has few, so they are ranked in the app from vectors kept between turns, and
 *   only which qualify (and their versions) is read per turn. pgvector's ranking cast every row's array to a vector
 *   (about 7 ms per 1,000 memories, on a core the message search needed);
 * - the messages, with the exact search: what changed in the kept vectors. pgvector ranks them in the database, with
 *   the vector (see `searchWaitsForVector`), and, given `reach`, reads the passages around them in the same call;
 *   the memories it will likely rank nearest are guessed from the last turn's and read in the same batch
 *   (`readGuessed`), so what meaning alone finds costs no round trip of its own before the model.
 */
export async function nearestToQuestion(
  db: Db,
  userId: string,
  question: QuestionVector,
  want: {
    model?: string;
    memories: number;
    messages: number;
    excludeThreadId?: string;
    reach?: PassageReach;
    /** Reads the memories a guess ranks nearest (see guessMemories), in the batch the ranking's reads go in. */
    readGuessed?: (ids: string[]) => Promise<void>;
  },
): Promise<[VectorHit[], MessageHits]> {
  const index = await vectorIndex(db);
  const exact = index instanceof ExactScanIndex ? index : null;
  const memoriesAhead = want.model
    ? keptMemoryVectors(db, userId, want.model, exact ? Infinity : MEMORY_READ_LIMIT)
    : null;
  const dims = exact && want.model && want.messages ? keptDims(db, userId, want.model) : null;
  const messagesAhead = exact && dims ? messageVectors(db, userId, want.model!, dims) : null;
  // A question with no vector (or another model's) leaves what was read ahead unused: its failure is not the turn's.
  void memoriesAhead?.catch(() => undefined);
  void messagesAhead?.catch(() => undefined);
  const q = await question;
  if (!q) return [[], { hits: [], rows: null }];
  const ahead = q.model === want.model;
  const memories = async () => {
    const rows = ahead ? await memoriesAhead : null;
    return rows
      ? scanMemories(rows, q.vector, want.memories)
      : index.nearestMemories(userId, q.model, q.vector, want.memories);
  };
  const messages = async (): Promise<MessageHits> => {
    if (!want.messages) return { hits: [], rows: null };
    const { model, vector } = q;
    if (!exact && want.reach && vector.length <= HNSW_MAX_DIMS) {
      const rows = await (index as PgvectorIndex).nearestPassages(
        userId,
        model,
        vector,
        want.excludeThreadId,
        want.reach,
      );
      return { hits: hitsOf(rows), rows };
    }
    const hits = exact
      ? ahead && messagesAhead && dims === vector.length
        ? exact.scanMessages(await messagesAhead, vector, want.messages, want.excludeThreadId)
        : await exact.nearestMessages(userId, model, vector, want.messages, want.excludeThreadId)
      : await index.nearestMessages(userId, model, vector, want.messages, want.excludeThreadId);
    return { hits, rows: null };
  };
  const near = messages();
  if (exact) return Promise.all([memories(), near]);
  // pgvector's search finishes last: it goes out before the scans of kept vectors (about 2 ms for a user with a
  // thousand memories), which then run while the database works. The memories it will rank nearest are read beside it.
  void near.catch(() => undefined); // its failure is awaited below, not unhandled meanwhile
  await new Promise((resolve) => setImmediate(resolve));
  const guessed = ahead && want.readGuessed ? want.readGuessed(guessMemories(db, userId, q, want.memories)) : null;
  const [found, hits] = await Promise.all([memories(), near, guessed]);
  return [found, hits];
}

/**
 * The ids of the memories each user's last search qualified (by user and model), for the next turn's guess: at most
 * as many ids in all as vectors are kept (a guess needs the vector too), the users least recently searched going first.
 */
const lastQualified = new WeakMap<Db, { byUser: Map<string, string[]>; ids: number }>();

/**
 * The memories the ranking will most likely return: the nearest of those the user's last search qualified, by the
 * vectors kept for them. The ranking itself still waits for what qualifies now; a memory it finds that the guess
 * missed is read after it (one more round trip), so a wrong guess costs time, never a memory.
 */
function guessMemories(db: Db, userId: string, q: { model: string; vector: number[] }, k: number): string[] {
  const ids = lastQualified.get(db)?.byUser.get(`${userId} ${q.model}`);
  const cache = memoryCaches.get(db);
  if (!ids || !cache) return [];
  const rows = ids.flatMap((id) => {
    const kept = cache.get(id);
    return kept ? [{ id, vector: kept.vector }] : [];
  });
  return scanMemories(rows, q.vector, k).map((h) => h.id);
}

function rememberQualified(db: Db, key: string, ids: string[]) {
  let kept = lastQualified.get(db);
  if (!kept) lastQualified.set(db, (kept = { byUser: new Map(), ids: 0 }));
  kept.ids += ids.length - (kept.byUser.get(key)?.length ?? 0);
  kept.byUser.delete(key);
  kept.byUser.set(key, ids);
  while (kept.ids > MEMORY_VECTORS_KEPT && kept.byUser.size > 1) {
    const [oldest, gone] = kept.byUser.entries().next().value!;
    kept.byUser.delete(oldest);
    kept.ids -= gone.length;
  }
}

/** The hits passage rows were read around, best first (each row names its hit and the hit's score). */
const hitsOf = (rows: NeighborRow[]): VectorHit[] => {
  const seen = new Map<string, number>();
  for (const r of rows) if (!seen.has(r.hit)) seen.set(r.hit, r.rank);
  return [...seen].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
};

/** Whether a search by meaning needs the question's vector before its reads (pgvector), or only for its scan. */
export const searchWaitsForVector = async (db: Db) => (await vectorIndex(db)).kind === "pgvector";

export async function ensureVectorIndex(db: Db, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16000) return;
  return (await vectorIndex(db)).prepare(dims);
}

const literal = (v: number[]) => `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(",")}]`;

/** The filter pgvector's search puts on a user's memories (the exact search's is mnemo_memory_vector_versions). */
const memoryWhere = (userId: string, model: string, dims: number) => Prisma.sql`
  "userId" = ${userId} AND "embeddingModel" = ${model} AND status = 'active' AND NOT muted AND embedding IS NOT NULL
  AND array_length(embedding, 1) = ${dimsSql(dims)} AND ("expiresAt" IS NULL OR "expiresAt" > now())`;

/** HNSW indexes at most 2,000 dimensions of `vector`; larger models are searched exactly. */
const HNSW_MAX_DIMS = 2000;

class PgvectorIndex implements VectorIndex {
  readonly kind = "pgvector";
  private readonly exact: ExactScanIndex;
  private readonly indexed = new Map<number, Promise<void>>();

  constructor(private readonly db: Db) {
    this.exact = new ExactScanIndex(db);
  }

  nearestMemories(userId: string, model: string, q: number[], k: number): Promise<VectorHit[]> {
    const v = literal(q);
    return this.db.$queryRaw<VectorHit[]>`
      SELECT id, (1 - (embedding::vector <=> ${v}::vector))::float8 AS score
      FROM "Memory" WHERE ${memoryWhere(userId, model, q.length)}
      ORDER BY embedding::vector <=> ${v}::vector LIMIT ${k}::int
    `;
  }

  async nearestMessages(userId: string, model: string, q: number[], k: number, excludeThreadId?: string) {
    if (q.length > HNSW_MAX_DIMS) return this.exact.nearestMessages(userId, model, q, k, excludeThreadId);
    dimsSql(q.length); // a whole positive size, or no search
    // A function (the HNSW index, the user's copies, the exact fallback): it goes out in the turn's batched read.
    return callFunction<VectorHit>(this.db, {
      // No scope: the caller's passage read filters the threads.
      call: "mnemo_nearest_messages($1, $2, $3, $4::int, $5::int, $6, $7::timestamp, $8::text, $9::boolean)",
      params: [userId, model, literal(q), q.length, k, excludeThreadId ?? null, null, null, null],
    });
  }

  /**
   * The search above in the threads recall may search, `reach.limit` hits, with their neighbours, in one call
   * (mnemo_nearest_passages): in the turn's batched read, the neighbours add no round trip before the model.
   */
  nearestPassages(
    userId: string,
    model: string,
    q: number[],
    excludeThreadId: string | undefined,
    reach: PassageReach,
  ): Promise<NeighborRow[]> {
    dimsSql(q.length);
    return callFunction<NeighborRow>(this.db, {
      call: "mnemo_nearest_passages($1, $2, $3, $4::int, $5::int, $6, $7::int, $8::timestamp, $9::text, $10::boolean)",
      params: [
        userId,
        model,
        literal(q),
        q.length,
        reach.limit,
        excludeThreadId ?? null,
        reach.n,
        retentionCutoff(),
        ...scopeParams(reach.scope),
      ],
      dates: PASSAGE_DATES,
    });
  }
  /**
   * An HNSW index over messages' vectors of this size, each vector once (copies left out), made once; later calls are
   * free. It replaces the index of earlier versions, which held copies too.
   */
  prepare(dims: number): Promise<void> {
    if (dims > HNSW_MAX_DIMS) return Promise.resolve();
    let p = this.indexed.get(dims);
    if (!p) {
      p = this.db.$executeRaw`
          CREATE INDEX CONCURRENTLY IF NOT EXISTS ${Prisma.raw(`"${hnswIndexName(dims)}"`)} ON "Item"
          USING hnsw ((embedding::vector(${dimsSql(dims)})) vector_cosine_ops)
          WHERE array_length(embedding, 1) = ${dimsSql(dims)} AND NOT "vectorCopy"
        `
        .then(
          () => this.db.$executeRaw`DROP INDEX CONCURRENTLY IF EXISTS ${Prisma.raw(`"Item_embedding_hnsw_${dims}"`)}`,
        )
        .then(() => undefined)
        .catch((e) => {
          this.indexed.delete(dims);
          console.warn(
            `[mnemo] could not create the vector index for ${dims} dimensions: ${(e as Error).message.split("\n")[0]}`,
          );
        });
      this.indexed.set(dims, p);
    }
    return p;
  }
}

/** The HNSW index's name for vectors of this size. */
export const hnswIndexName = (dims: number) => `Item_embedding_hnsw_distinct_${dims}`;

class ExactScanIndex implements VectorIndex {
  readonly kind = "exact";
  constructor(private readonly db: Db) {}

  async nearestMemories(userId: string, model: string, q: number[], k: number): Promise<VectorHit[]> {
    return scanMemories((await keptMemoryVectors(this.db, userId, model, Infinity))!, q, k);
  }

  async nearestMessages(userId: string, model: string, q: number[], k: number, excludeThreadId?: string) {
    return this.scanMessages(await messageVectors(this.db, userId, model, q.length), q, k, excludeThreadId);
  }

  scanMessages(set: VectorSet, q: number[], k: number, excludeThreadId?: string): VectorHit[] {
    const keep = (i: number) => set.threadIds[i] !== excludeThreadId;
    return topK(set.ids, set.data, q, k, keep);
  }

  async prepare(): Promise<void> {}
}

/** Memory vectors kept between turns, by row version; bounded (20,000 of 512 floats: about 40 MB). */
const MEMORY_VECTORS_KEPT = 20_000;
type KeptMemoryVector = { version: string; vector: Float32Array };
const memoryCaches = new WeakMap<Db, Map<string, KeptMemoryVector>>();

/**
 * The nearest of the memories whose vectors have the question's size, each scored where it is kept: copying 1,000 of
 * them into one array first cost 0.5 ms a turn, and 8 ms at p95 as the copies were collected.
 */
function scanMemories(rows: Array<{ id: string; vector: Float32Array }>, q: number[], k: number): VectorHit[] {
  const qn = normalized(q);
  const scores = Float64Array.from(rows, (r) => (r.vector.length === qn.length ? dot(r.vector, qn) : -Infinity));
  const ids = rows.map((r) => r.id);
  return bestOf(ids, scores, k).map((i) => ({ id: ids[i], score: scores[i] }));
}

/** Memory vectors read in a turn past which pgvector ranks them for this turn, while they are read in the background. */
const MEMORY_READ_LIMIT = 256;
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
async function keptMemoryVectors(db: Db, userId: string, model: string, maxRead: number) {
  let cache = memoryCaches.get(db);
  if (!cache) memoryCaches.set(db, (cache = new Map()));
  // In the turn's batched read: when no memory changed, the search makes no round trip of its own.
  const rows = await callFunction<{ id: string; version: string }>(db, {
    call: "mnemo_memory_vector_versions($1, $2)",
    params: [userId, model],
  });
  rememberQualified(
    db,
    `${userId} ${model}`,
    rows.map((r) => r.id),
  );
  const missing = rows.filter((r) => cache.get(r.id)?.version !== r.version).map((r) => r.id);
  if (missing.length > maxRead) {
    fillInBackground(db, cache, `${userId} ${model}`, missing);
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

/** Cosine similarity of two vectors (0 when their sizes differ or one is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Exact cosine top-k of the rows `keep` accepts, best first. Row i's vector is at i * dims in `data`, normalized, so
 * a dot product is the cosine; four sums at once, which V8 runs about three times as fast as one (10,000 rows of 512:
 * 3.6 ms against 12.8 ms with the norms and a sort of every row, measured).
 */
function topK(
  ids: string[],
  data: Float32Array,
  q: number[],
  k: number,
  keep: (i: number) => boolean = () => true,
): VectorHit[] {
  const qn = normalized(q);
  const dims = qn.length;
  const scores = new Float64Array(ids.length).fill(-Infinity);
  for (let i = 0, o = 0; i < ids.length; i++, o += dims) if (keep(i)) scores[i] = dot(data, qn, o);
  return bestOf(ids, scores, k).map((i) => ({ id: ids[i], score: scores[i] }));
}

/** The dot product of `qn` with the vector at `o` in `v`: four sums at once (see topK). */
function dot(v: Float32Array, qn: Float32Array, o = 0): number {
  const tail = qn.length - (qn.length % 4);
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (let j = 0; j < tail; j += 4) {
    a += v[o + j] * qn[j];
    b += v[o + j + 1] * qn[j + 1];
    c += v[o + j + 2] * qn[j + 2];
    d += v[o + j + 3] * qn[j + 3];
  }
  for (let j = tail; j < qn.length; j++) a += v[o + j] * qn[j];
  return a + b + c + d;
}

/**
 * The k best rows, best first; ties by id, so every instance ranks alike whatever order it keeps the rows in. Rows
 * are gathered above a floor that rises each time 4k have gathered (cut back to the k best): sorting a copy of all
 * 10,000 scores to find the k-th took 1.1 ms of each turn, this 0.2 ms.
 */
export function bestOf(ids: string[], scores: Float64Array, k: number): number[] {
  const order = (x: number, y: number) => scores[y] - scores[x] || (ids[x] < ids[y] ? -1 : ids[x] > ids[y] ? 1 : 0);
  const best: number[] = [];
  if (k <= 0) return best;
  let floor = -Infinity;
  for (let i = 0; i < scores.length; i++) {
    if (scores[i] === -Infinity || scores[i] < floor) continue;
    best.push(i);
    if (best.length < 4 * k) continue;
    best.sort(order).length = k;
    floor = scores[best[k - 1]];
  }
  return best.sort(order).slice(0, k);
}
