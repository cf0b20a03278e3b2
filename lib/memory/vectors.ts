// Nearest neighbours of a question's embedding among one user's memories and
// messages, by cosine similarity. A VectorIndex (mem0's VectorStore is the
// model) is chosen once per database, at its first use, by what the database
// can do:
// - PgvectorIndex, PostgreSQL with pgvector: the database ranks (`<=>`).
//   Messages use an HNSW index per vector size (created when the first vector
//   of that size is stored), holding each vector once, with iterative scans so
//   the per-user filter still yields k rows; a user's copies of a vector, and
//   all the rows of a user with fewer than k (or of a scope whose rows the
//   scan stopped early looking for), are ranked exactly. Recall's
//   search is filtered to the threads it may read, and reads its hits'
//   neighbours in the same call (mnemo_nearest_passages).
// - ExactScanIndex, PGlite or PostgreSQL without pgvector: an exact scan in the
//   app. The user's message vectors are kept in memory between turns
//   (./kept-vectors.ts), read again only where the stored rows changed.
import type { Db } from "@/lib/db/types";
import { callFunction } from "@/lib/db/function-calls";
import { Prisma } from "@/lib/generated/prisma/client";
import {
  dimsSql,
  keptDims,
  mergePrescan,
  messageVectors,
  startPrescan,
  type Prescan,
  type VectorSet,
} from "./kept-vectors";
import { getConfig } from "@/lib/config";
import {
  guessMemories,
  keptMemoryVectors,
  MEMORY_READ_LIMIT,
  scanMemories,
  scanMemoriesAfter,
  type Guess,
} from "./kept-memory-vectors";
import { topK, type VectorHit } from "./vector-scores";
import { PASSAGE_DATES, type NeighborRow } from "./recall-passages";
import { retentionCutoff } from "@/lib/account/retention";
import { scopeParams, type MemoryScope } from "@/lib/projects/scope";

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

/**
 * A question's vector, when it comes (null: the endpoint failed or timed out; recall goes on by words), with what the
 * encoder's worker found among the kept message vectors meanwhile (`prescanMessages`).
 */
export type QuestionVector = Promise<{ model: string; vector: number[]; prescan?: Prescan | null } | null>;

/** The exact searches of kept message vectors in this process: those ranked by the encoder's worker, those here. */
const exactScans = { fromWorker: 0, here: 0 };
export const exactScanStats = () => ({ ...exactScans });

/** Rows the worker's scan keeps beyond those a search asks: the rows the turn's first read may change meanwhile. */
const PRESCAN_SPARE = 64;

/**
 * With the exact search, the kept message vectors a question's worker scans as soon as it has the vector
 * (lib/llm/embeddings.ts, earlyQueryVector): on PGlite the turn's first read holds the server's thread for about
 * 8 ms, and the 10,000-row scan (about 5 ms) ran after it; now it runs beside it. `k`: the hits the search will ask.
 */
export function prescanMessages(db: Db, userId: string, excludeThreadId: string | null, k: number) {
  return (model: string) =>
    startPrescan(db, userId, model, excludeThreadId, {
      k: k + PRESCAN_SPARE,
      timeoutMs: getConfig().embeddingTimeoutMs,
    });
}

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
  let guess: Guess | null = null;
  const memories = async () => {
    const rows = ahead ? await memoriesAhead : null;
    if (!rows) return index.nearestMemories(userId, q.model, q.vector, want.memories);
    return guess
      ? scanMemoriesAfter(guess, rows, q.vector, want.memories)
      : scanMemories(rows, q.vector, want.memories);
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
        ? exact.scanMessages(await messagesAhead, vector, want.messages, want.excludeThreadId, q.prescan)
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
  if (ahead && want.readGuessed) guess = guessMemories(db, userId, q, want.memories);
  const guessed = guess ? want.readGuessed!(guess.hits.map((h) => h.id)) : null;
  const [found, hits] = await Promise.all([memories(), near, guessed]);
  return [found, hits];
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

  /** The set's top k, from the worker's scan when it can tell (`mergePrescan`), else scanned here. */
  scanMessages(set: VectorSet, q: number[], k: number, excludeThreadId?: string, prescan?: Prescan | null) {
    const merged = prescan ? mergePrescan(set, prescan, q, k, excludeThreadId) : null;
    exactScans[merged ? "fromWorker" : "here"]++;
    if (merged) return merged;
    const keep = (i: number) => set.threadIds[i] !== excludeThreadId;
    return topK(set.ids, set.data, q, k, keep, set.signs);
  }

  async prepare(): Promise<void> {}
}
