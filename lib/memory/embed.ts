// The embedder: gives memories and messages their vectors after they are
// written, off the hot path (the "embed" job, `npm run memory:embed`).
// A row needs a vector while its embeddingModel is not the configured model:
// new rows, rows whose text changed (a trigger clears the vector), and every
// row after the model changes. That column is the mark: a crash or an outage
// leaves rows unmarked, and the next run picks them up where it stopped.
import { recordUsage } from "@/lib/account/usage-ledger";
import { backgroundAllowed } from "@/lib/account/usage-limits";
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { userContext } from "@/lib/user-context";
import { EMBED_MAX_CHARS, embedTexts, resolveEmbedder, type Embedder } from "@/lib/llm/embeddings";
import { enqueue } from "@/lib/jobs/queue";
import { ensureVectorIndex } from "./vectors";
import { mergeNearDuplicates } from "./near-duplicates";
import { attributeByMeaning } from "./attribution-by-meaning";
import OpenAI from "openai";
import { Prisma } from "@/lib/generated/prisma/client";
import { isLocalEndpoint, recordSend } from "./disclosure";

/** `digest`: the md5 of the row's text as read, to tell whether it changed before its vector is stored. */
type Pending = { table: "Memory" | "Item"; id: string; userId: string; text: string; digest: string };
export type EmbedProgress = { embedded: number; unembeddable: number; remaining: number };

const BATCH = 64;

/**
 * The memories an embedding endpoint may be sent: never one the user said not to mention (it goes to no model), and a
 * private one ("never sent off this machine") only when the endpoint is local (lib/memory/disclosure.ts). Those wait,
 * unembedded, until the user changes that or the endpoint.
 */
const sendable = (e: Embedder) =>
  Prisma.sql`NOT muted AND (${!e.connection || isLocalEndpoint(e.connection.baseURL)}::boolean OR NOT private)`;

/** Rows of this user (or of everyone) that still need a vector for `model` and may be sent to its endpoint. */
export async function countPending(db: Db, e: Embedder, userId?: string): Promise<number> {
  const model = e.model;
  const [r] = await db.$queryRaw<Array<{ n: number }>>`
    SELECT ((SELECT count(*) FROM "Memory" WHERE (${userId ?? null}::text IS NULL OR "userId" = ${userId ?? null}) AND status <> 'archived'
               AND "embeddingModel" IS DISTINCT FROM ${model} AND ${sendable(e)})
           + (SELECT count(*) FROM "Item" i JOIN "Thread" t ON t.id = i."threadId"
               WHERE (${userId ?? null}::text IS NULL OR t."userId" = ${userId ?? null}) AND NOT t.temporary AND i.role IN ('user', 'assistant')
                 AND i.status IN ('complete', 'stopped') AND i.content <> '' AND i."embeddingModel" IS DISTINCT FROM ${model}))::int AS n
  `;
  return r?.n ?? 0;
}

/**
 * What of a message is embedded: its start, read without the rest (left() reads a stored value only so far), or a
 * sealed one whole (it opens only whole). Its md5 tells whether the vector still fits: reading a 7 MB message whole
 * for that held the embedded database for 50 ms per row.
 */
const embeddedPart = (content: Prisma.Sql) =>
  Prisma.sql`CASE WHEN left(${content}, 5) = 'enc1:' THEN ${content} ELSE left(${content}, ${EMBED_MAX_CHARS}) END`;

/** The next rows to embed: memories first (few, and recall leans on them), then messages, oldest id first. */
async function nextPending(db: Db, e: Embedder, userId: string | undefined, limit: number): Promise<Pending[]> {
  const model = e.model;
  const memories = await db.$queryRaw<Pending[]>`
    SELECT 'Memory' AS "table", id, "userId", text, md5(text) AS digest FROM "Memory"
     WHERE (${userId ?? null}::text IS NULL OR "userId" = ${userId ?? null}) AND status <> 'archived' AND "embeddingModel" IS DISTINCT FROM ${model}
       AND ${sendable(e)}
     ORDER BY id LIMIT ${limit}
  `;
  if (memories.length >= limit) return memories;
  const items = await db.$queryRaw<Pending[]>`
    SELECT 'Item' AS "table", i.id, t."userId", md5(x.text) AS digest, x.text
      FROM "Item" i JOIN "Thread" t ON t.id = i."threadId"
     CROSS JOIN LATERAL (SELECT ${embeddedPart(Prisma.sql`i.content`)} AS text) x
     WHERE (${userId ?? null}::text IS NULL OR t."userId" = ${userId ?? null}) AND NOT t.temporary AND i.role IN ('user', 'assistant')
       AND i.status IN ('complete', 'stopped') AND i.content <> '' AND i."embeddingModel" IS DISTINCT FROM ${model}
     ORDER BY i.id LIMIT ${limit - memories.length}
  `;
  return [...memories, ...items];
}

/**
 * Stores vectors; a row whose text changed meanwhile keeps waiting (its md5 is compared). A message whose vector
 * another row already holds in the approximate index is marked a copy and left out of it (lib/memory/vectors.ts).
 */
async function store(db: Db, e: Embedder, rows: Pending[], vectors: Array<number[] | null>) {
  await db.$transaction(
    rows.map((r, i) =>
      r.table === "Memory"
        ? db.$executeRaw`
            UPDATE "Memory" SET embedding = ${vectors[i]}::real[], "embeddingModel" = ${e.model}
            WHERE id = ${r.id} AND md5(text) = ${r.digest}
          `
        : db.$executeRaw`
            UPDATE "Item" SET embedding = v.embedding, "embeddingModel" = ${e.model}, "vectorKey" = v.key,
              "vectorSeq" = pg_current_xact_id()::text::bigint,
              "vectorCopy" = EXISTS (SELECT 1 FROM "Item" d WHERE d."vectorKey" = v.key
                AND d."embeddingModel" = ${e.model} AND NOT d."vectorCopy" AND d.id <> ${r.id})
            FROM (SELECT x AS embedding, md5(x::text) AS key FROM (SELECT ${vectors[i]}::real[] AS x) y) v
            WHERE id = ${r.id} AND md5(${embeddedPart(Prisma.sql`content`)}) = ${r.digest}
          `,
    ),
  );
  const dims = vectors.find((v) => v)?.length;
  // Not awaited: building the index (CONCURRENTLY) waits for every open transaction on the table, which on a busy
  // server can take long, and vectors are searched without it meanwhile (exactly). It logs its own failure.
  if (dims) void ensureVectorIndex(db, dims);
  // The built-in encoder's vectors are for finding, not for judging sameness: "The user is left-handed" and "… is
  // right-handed" are 0.932 alike under it, above the merge threshold; so no merging or crediting by them.
  if (!e.connection) return;
  // Answers with their vectors now: the memories they drew on by meaning, not only by words.
  await attributeByMeaning(
    db,
    e.model,
    rows.filter((r, i) => r.table === "Item" && vectors[i]).map((r) => r.id),
  );
  // New or changed memories: merge any that says the same thing in other words (each user's through the gate).
  const byUser = new Map<string, string[]>();
  rows.forEach((r, i) => {
    if (r.table === "Memory" && vectors[i]) byUser.set(r.userId, [...(byUser.get(r.userId) ?? []), r.id]);
  });
  for (const [owner, ids] of byUser) await mergeNearDuplicates(await userContext(db, owner), e.model, ids);
}

/**
 * Embeds one batch; an input the endpoint refuses (400) is marked as tried, with no vector, so it never blocks the
 * rest.
 */
async function embedBatch(
  db: Db,
  e: Embedder,
  rows: Pending[],
  ciphers: Map<string, ContentCipher>,
): Promise<{ embedded: number; unembeddable: number }> {
  for (const r of rows) if (!ciphers.has(r.userId)) ciphers.set(r.userId, (await userContext(db, r.userId)).cipher);
  const texts = rows.map((r) => ciphers.get(r.userId)!.open(r.text));
  // Each user's share of a call goes to their ledger (by characters embedded).
  const charge = (only?: number) => (tokens: number) => {
    const share = new Map<string, number>();
    rows.forEach((r, i) => {
      if (only === undefined || only === i) share.set(r.userId, (share.get(r.userId) ?? 0) + texts[i].length);
    });
    const total = [...share.values()].reduce((a, b) => a + b, 0) || 1;
    for (const [userId, chars] of share)
      void recordUsage(db, userId, { embeddingCalls: 1, tokens: (tokens * chars) / total }).catch(() => undefined);
  };
  // What left the box: each user's memories in this batch went to the embedding endpoint (lib/memory/disclosure.ts).
  const disclose = async () => {
    if (!e.connection) return; // the built-in encoder runs on this machine
    for (const [userId, cipher] of ciphers) {
      const memoryIds = rows.filter((r) => r.table === "Memory" && r.userId === userId).map((r) => r.id);
      const record = { userId, memoryIds, model: e.model, baseURL: e.connection.baseURL, client: "embedding" as const };
      if (memoryIds.length) await recordSend(db, cipher, record).catch(() => undefined);
    }
  };
  try {
    const vectors = await embedTexts(e, texts, { onTokens: charge() });
    await disclose();
    await store(db, e, rows, vectors);
    return { embedded: rows.length, unembeddable: 0 };
  } catch (err) {
    if (!(err instanceof OpenAI.BadRequestError)) throw err;
  }
  // One by one: each was sent, refused or not.
  await disclose();
  let embedded = 0;
  let unembeddable = 0;
  for (let i = 0; i < rows.length; i++) {
    let v: number[] | null = null;
    try {
      [v] = await embedTexts(e, [texts[i]], { onTokens: charge(i) });
      embedded++;
    } catch (err) {
      if (!(err instanceof OpenAI.BadRequestError)) throw err;
      unembeddable++;
    }
    await store(db, e, [rows[i]], [v]);
  }
  return { embedded, unembeddable };
}

/**
 * Embeds what is pending, for one user or everyone, until nothing is left or
 * `max` rows were done. Endpoint errors other than a refused input propagate
 * (the job retries with backoff; the rows stay pending).
 */
export async function embedPending(
  db: Db,
  opts: { userId?: string; max?: number; batch?: number; onProgress?: (p: EmbedProgress) => void } = {},
): Promise<EmbedProgress & { model: string | null }> {
  const e = await resolveEmbedder(db);
  if (!e) return { model: null, embedded: 0, unembeddable: 0, remaining: 0 };
  const ciphers = new Map<string, ContentCipher>();
  const done = { embedded: 0, unembeddable: 0 };
  const max = opts.max ?? Infinity;
  while (done.embedded + done.unembeddable < max) {
    const rows = await nextPending(
      db,
      e,
      opts.userId,
      Math.min(opts.batch ?? BATCH, max - done.embedded - done.unembeddable),
    );
    if (!rows.length) break;
    // Users past today's token allowance wait for tomorrow; when only they are left, stop.
    const allowed = new Map<string, boolean>();
    for (const u of new Set(rows.map((r) => r.userId))) allowed.set(u, await backgroundAllowed(db, u));
    const now = rows.filter((r) => allowed.get(r.userId));
    if (!now.length) break;
    const r = await embedBatch(db, e, now, ciphers);
    done.embedded += r.embedded;
    done.unembeddable += r.unembeddable;
    if (opts.onProgress) opts.onProgress({ ...done, remaining: await countPending(db, e, opts.userId) });
  }
  const remaining = done.embedded + done.unembeddable >= max ? await countPending(db, e, opts.userId) : 0;
  return { model: e.model, ...done, remaining };
}

/** Queues embedding of this user's new or changed rows (the job does nothing when no embedding model is set). */
/**
 * One user's texts embedded off the hot path (a document's passages: lib/attachments/vectors.ts), charged to their
 * ledger; null while they are over their daily token limit (background work waits, as the memories' does).
 */
export async function embedForUser(db: Db, e: Embedder, userId: string, texts: string[]): Promise<number[][] | null> {
  if (!(await backgroundAllowed(db, userId))) return null;
  return embedTexts(e, texts, {
    maxRetries: 2,
    onTokens: (tokens) => void recordUsage(db, userId, { embeddingCalls: 1, tokens }).catch(() => undefined),
  });
}

export function queueEmbedding(db: Db, userId: string, dedupeKey?: string): Promise<void> {
  return enqueue(db, [{ kind: "embed", userId, payload: { userId }, dedupeKey }]);
}

/** After a write outside a turn (dashboard, import): queue the user's embedding, only when a model is set. */
export async function embedSoon(db: Db, userId: string): Promise<void> {
  if (await resolveEmbedder(db)) await queueEmbedding(db, userId);
}

/** After the embedding model changed: every user with memories or threads gets a job that re-embeds what they have. */
export async function queueReembedAll(db: Db): Promise<number> {
  if (!(await resolveEmbedder(db))) return 0;
  const users = await db.$queryRaw<Array<{ id: string }>>`
    SELECT DISTINCT "userId" AS id FROM "Memory" UNION SELECT DISTINCT "userId" AS id FROM "Thread"
  `;
  await enqueue(
    db,
    users.map((u) => ({ kind: "embed" as const, userId: u.id, payload: { userId: u.id } })),
  );
  return users.length;
}
