// Nearest neighbours of a question's embedding among one user's memories and
// messages, by cosine similarity. A VectorIndex (mem0's VectorStore is the
// model) is chosen once per database, at its first use, by what the database
// can do:
// - PgvectorIndex, PostgreSQL with pgvector: the database ranks (`<=>`).
//   Messages use an HNSW index per vector size (created when the first vector
//   of that size is stored), holding each vector once, with iterative scans so
//   the per-user filter still yields k rows; a user's copies of a vector, and
//   all the rows of a user with fewer than k, are ranked exactly.
// - ExactScanIndex, PGlite or PostgreSQL without pgvector: an exact scan in the
//   app. The user's message vectors are kept in memory between turns (one
//   Float32Array) and reloaded only when the set of embedded rows changes.
import type { Db } from "@/lib/db/types";
import { callFunction } from "@/lib/db/function-calls";
import { Prisma } from "@/lib/generated/prisma/client";

export type VectorHit = { id: string; score: number };

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

export async function ensureVectorIndex(db: Db, dims: number): Promise<void> {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16000) return;
  return (await vectorIndex(db)).prepare(dims);
}

const literal = (v: number[]) => `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(",")}]`;

/**
 * A vector size as SQL text: a type modifier (`vector(1536)`) cannot be a parameter, and a partial index's
 * predicate matches only a literal.
 */
function dimsSql(dims: number): Prisma.Sql {
  if (!Number.isInteger(dims) || dims <= 0) throw new Error(`not a vector size: ${dims}`);
  return Prisma.raw(String(dims));
}

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
    const dims = dimsSql(q.length);
    const v = literal(q);
    const mine = Prisma.sql`"userId" = ${userId} AND "embeddingModel" = ${model} AND array_length(embedding, 1) = ${dims}
      AND "threadId" IS DISTINCT FROM ${excludeThreadId ?? null}::text`;
    const distance = Prisma.sql`(embedding::vector(${dims})) <=> ${v}::vector(${dims})`;
    // The HNSW index answers `near`; relaxed_order lets it keep scanning past other users' rows, so the outer query
    // re-sorts. The index holds each vector once: identical vectors form a group the graph search cannot leave, which
    // hides other rows from it, so a row whose vector another row holds is a copy, left out of the index. The user's
    // copies are ranked exactly, once per distinct vector (`copy_keys`: each key's distance read from one of the
    // user's rows holding it, which also checks the model and size), then read back as rows (`copies`). The index
    // stays approximate: when it yields fewer rows than asked (a user with few, or a scan that gave up) all the user's
    // rows are ranked exactly instead (`mine`). Each part is a materialized CTE read only when its one-time filter
    // holds, in one statement.
    const enough = Prisma.sql`(SELECT count(*) FROM near) >= ${k}::int`;
    const [, rows] = await this.db.$transaction([
      this.db.$executeRaw`SET LOCAL hnsw.iterative_scan = relaxed_order`,
      this.db.$queryRaw<VectorHit[]>`
        WITH RECURSIVE near AS MATERIALIZED (
          SELECT id, ${distance} AS d FROM "Item" WHERE ${mine} AND NOT "vectorCopy" ORDER BY ${distance} LIMIT ${k}::int
        ), copy_key_list (key) AS (
          -- The user's distinct copied vectors, one index probe each (a loose scan), not one row per copy.
          (SELECT "vectorKey" FROM "Item" WHERE "userId" = ${userId} AND "vectorCopy" ORDER BY "vectorKey" LIMIT 1)
          UNION ALL
          SELECT (SELECT "vectorKey" FROM "Item" WHERE "userId" = ${userId} AND "vectorCopy" AND "vectorKey" > l.key
                  ORDER BY "vectorKey" LIMIT 1)
          FROM copy_key_list l WHERE l.key IS NOT NULL
        ), copy_keys AS MATERIALIZED (
          SELECT key, d FROM (
            SELECT c.key, (SELECT ${distance} FROM "Item" WHERE "userId" = ${userId} AND "vectorCopy" AND "vectorKey" = c.key
                             AND "embeddingModel" = ${model} AND array_length(embedding, 1) = ${dims} LIMIT 1) AS d
            FROM copy_key_list c WHERE c.key IS NOT NULL
          ) x WHERE d IS NOT NULL ORDER BY d LIMIT ${k}::int
        ), copies AS MATERIALIZED (
          SELECT r.id, c.d FROM copy_keys c CROSS JOIN LATERAL (
            SELECT i.id FROM "Item" i WHERE i."userId" = ${userId} AND i."vectorCopy" AND i."vectorKey" = c.key
              AND i."threadId" IS DISTINCT FROM ${excludeThreadId ?? null}::text LIMIT ${k}::int
          ) r ORDER BY c.d LIMIT ${k}::int
        ), mine AS MATERIALIZED (
          SELECT id, embedding FROM "Item" WHERE ${mine}
        )
        SELECT id, (1 - d)::float8 AS score FROM (
          SELECT id, d FROM near WHERE ${enough}
          UNION ALL
          SELECT id, d FROM copies WHERE ${enough}
          UNION ALL
          SELECT id, d FROM (SELECT id, ${distance} AS d FROM mine ORDER BY d LIMIT ${k}::int) exact WHERE NOT ${enough}
        ) n ORDER BY d LIMIT ${k}::int
      `,
    ]);
    return rows;
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
    const set = await memoryVectors(this.db, userId, model, q.length);
    return topK(
      set.map((r) => r.id),
      (i) => set[i].vector,
      q,
      k,
    );
  }

  async nearestMessages(userId: string, model: string, q: number[], k: number, excludeThreadId?: string) {
    const dims = q.length;
    const set = await messageVectors(this.db, userId, model, dims);
    const keep = (i: number) => set.threadIds[i] !== excludeThreadId;
    return topK(set.ids, (i) => set.data.subarray(i * dims, (i + 1) * dims), q, k, keep);
  }

  async prepare(): Promise<void> {}
}

type VectorSet = {
  ids: string[];
  threadIds: string[];
  /** Row i's vector at i * dims, normalized; room past the last row for the ones stored next. */
  data: Float32Array;
  slots: Map<string, number>;
  /** The user's rows of this model held (ids.length) plus those of another size, left out. */
  count: number;
  others: number;
  /** The newest "vectorSeq" read (mnemo_message_vectors_mark), and when every row was last read. */
  seq: string | null;
  readAt: number;
};
const CACHED_USERS = 16;
/** Every row is read again after this long, whatever the mark says (a safety net, not a correctness need). */
const FULL_READ_MS = 10 * 60_000;
const caches = new WeakMap<Db, Map<string, VectorSet>>();

/**
 * The user's message vectors for this model and size, kept in process between turns. A turn's mark (how many rows,
 * the newest storing transaction) says whether they are all still here; when some were stored since, only those are
 * read (a user with 10,000 messages paid 1.3 s a turn on PGlite reading them all after every answer's vector).
 */
async function messageVectors(db: Db, userId: string, model: string, dims: number): Promise<VectorSet> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const key = `${userId}\u0000${model}\u0000${dims}`;
  // In the turn's batched read (lib/db/function-calls.ts): with the vectors kept, no round trip of its own.
  const [mark] = await callFunction<{ n: number; m: string | null }>(db, {
    call: "mnemo_message_vectors_mark($1, $2)",
    params: [userId, model],
  });
  const kept = cache.get(key);
  let set = kept && (await readStoredSince(db, kept, userId, model, dims, mark));
  set ??= await readAllVectors(db, userId, model, dims, mark);
  cache.delete(key);
  cache.set(key, set); // most recently used last
  while (cache.size > CACHED_USERS) cache.delete(cache.keys().next().value!);
  return set;
}

type Mark = { n: number; m: string | null };
type VectorRow = { id: string; threadId: string; embedding: number[] };

async function readAllVectors(db: Db, userId: string, model: string, dims: number, mark: Mark) {
  const rows = await db.$queryRaw<VectorRow[]>`
    SELECT id, "threadId", embedding FROM "Item"
    WHERE "userId" = ${userId} AND "embeddingModel" = ${model} AND array_length(embedding, 1) = ${dimsSql(dims)}
  `;
  const set: VectorSet = {
    ids: [],
    threadIds: [],
    data: new Float32Array(rows.length * dims),
    slots: new Map(),
    count: mark.n,
    others: mark.n - rows.length,
    seq: mark.m,
    readAt: Date.now(),
  };
  for (const r of rows) put(set, r, dims);
  return set;
}

/**
 * The kept set brought up to the mark by reading the rows stored since its last read; null when that cannot be
 * trusted to give every row (a row gone or moved away, one of another size, a count that does not add up), so all
 * are read again.
 */
async function readStoredSince(db: Db, set: VectorSet, userId: string, model: string, dims: number, mark: Mark) {
  if (set.count === mark.n && set.seq === mark.m) return set;
  if (set.seq === null || mark.m === null || Date.now() - set.readAt > FULL_READ_MS) return null;
  const rows = await db.$queryRaw<Array<VectorRow & { dims: number | null }>>`
    SELECT id, "threadId", embedding, array_length(embedding, 1) AS dims FROM "Item"
    WHERE "userId" = ${userId} AND "embeddingModel" = ${model}
      AND "vectorSeq" > ${set.seq}::bigint AND "vectorSeq" <= ${mark.m}::bigint
  `;
  if (rows.some((r) => r.dims !== dims)) return null;
  // Idempotent by id: two turns of one user reading the same rows at once put each once.
  for (const r of rows) put(set, r, dims);
  // More kept than counted: rows gone (an undone turn, a deleted chat) or moved away; their ids tell which.
  if (set.ids.length + set.others > mark.n && !(await dropGone(db, set, userId, model, dims))) return null;
  if (set.ids.length + set.others !== mark.n) return null;
  set.count = mark.n;
  set.seq = mark.m;
  return set;
}

/** Keeps only the rows still the user's (their ids read, not their vectors); false when one is there that is not kept. */
async function dropGone(db: Db, set: VectorSet, userId: string, model: string, dims: number) {
  // Not filtered by size (that reads every vector): a row of another size counts as one not kept.
  const [row] = await db.$queryRaw<Array<{ ids: string[] | null }>>`
    SELECT array_agg(id) AS ids FROM "Item" WHERE "userId" = ${userId} AND "embeddingModel" = ${model}
  `;
  const present = new Set(row?.ids ?? []);
  for (const id of present) if (!set.slots.has(id)) return false;
  // Each gone row's slot takes the last row (the order of the kept rows does not matter to the ranking).
  for (const id of set.ids.filter((id) => !present.has(id))) {
    const slot = set.slots.get(id)!;
    const last = set.ids.length - 1;
    if (slot !== last) {
      set.data.copyWithin(slot * dims, last * dims, (last + 1) * dims);
      set.ids[slot] = set.ids[last];
      set.threadIds[slot] = set.threadIds[last];
      set.slots.set(set.ids[slot], slot);
    }
    set.slots.delete(id);
    set.ids.pop();
    set.threadIds.pop();
  }
  return true;
}

/** Sets a row's vector in the set, in its slot when it has one, else after the last row (growing the room). */
function put(set: VectorSet, r: VectorRow, dims: number) {
  let slot = set.slots.get(r.id);
  if (slot === undefined) {
    slot = set.ids.length;
    set.slots.set(r.id, slot);
    set.ids.push(r.id);
    set.threadIds.push(r.threadId);
    if ((slot + 1) * dims > set.data.length) {
      // An eighth more room (at least 64 rows): sixteen users of 10,000 vectors already keep about 330 MB.
      const grown = new Float32Array(Math.max((slot + 64) * dims, Math.ceil((set.data.length * 1.125) / dims) * dims));
      grown.set(set.data);
      set.data = grown;
    }
  } else set.threadIds[slot] = r.threadId;
  set.data.set(normalized(r.embedding), slot * dims);
}

/** Memory vectors kept between turns, by row version; bounded (20,000 of 512 floats: about 40 MB). */
const MEMORY_VECTORS_KEPT = 20_000;
const memoryCaches = new WeakMap<Db, Map<string, { version: string; vector: Float32Array }>>();

/**
 * The user's memories that recall may use, with their vectors. Which memories qualify (active, not muted, not
 * expired) is asked of the database every time; only the vectors of rows unchanged since (same `xmin`, the row's
 * version: any update gives a new one) come from memory instead of being read and parsed again.
 */
async function memoryVectors(db: Db, userId: string, model: string, dims: number) {
  let cache = memoryCaches.get(db);
  if (!cache) memoryCaches.set(db, (cache = new Map()));
  // In the turn's batched read: when no memory changed, the search makes no round trip of its own.
  const rows = await callFunction<{ id: string; version: string }>(db, {
    call: "mnemo_memory_vector_versions($1, $2)",
    params: [userId, model],
  });
  const missing = rows.filter((r) => cache.get(r.id)?.version !== r.version).map((r) => r.id);
  if (missing.length) {
    const fresh = await db.$queryRaw<Array<{ id: string; version: string; embedding: number[] }>>`
      SELECT id, xmin::text AS version, embedding FROM "Memory" WHERE id = ANY(${missing}::text[])
    `;
    for (const r of fresh) {
      cache.delete(r.id);
      cache.set(r.id, { version: r.version, vector: normalized(r.embedding) });
    }
    while (cache.size > MEMORY_VECTORS_KEPT) cache.delete(cache.keys().next().value!);
  }
  // A row changed between the two reads is left out of this turn (its vector is not the one the filter saw), and so is
  // a vector of another size (kept all the same, so it is not read again).
  return rows.flatMap((r) => {
    const hit = cache.get(r.id);
    return hit?.version === r.version && hit.vector.length === dims ? [{ id: r.id, vector: hit.vector }] : [];
  });
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

function normalized(v: ArrayLike<number>): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * s;
  return out;
}

/** Exact cosine top-k of the rows `keep` accepts. */
function topK(
  ids: string[],
  vec: (i: number) => ArrayLike<number>,
  q: number[],
  k: number,
  keep: (i: number) => boolean = () => true,
): VectorHit[] {
  const qn = normalized(q);
  const scored: VectorHit[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (!keep(i)) continue;
    const v = vec(i);
    let dot = 0;
    let vv = 0;
    for (let j = 0; j < qn.length; j++) {
      dot += v[j] * qn[j];
      vv += v[j] * v[j];
    }
    scored.push({ id: ids[i], score: vv > 0 ? dot / Math.sqrt(vv) : 0 });
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, k);
}
