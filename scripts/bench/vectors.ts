// `npm run bench:vectors`: the exact vector search's kept vectors (lib/memory/vectors.ts, PGlite or PostgreSQL
// without pgvector) for one user with BENCH_MESSAGES (10,000) messages of 512 dimensions. Each round stores one new
// message's vector through the embed job, then times the next search two ways: on the client that keeps the user's
// vectors (it reads only the rows stored since) and on a fresh client (it reads them all, as every search did before
// the rows stored since could be told apart); then takes that message out again (an undone turn) and times the next
// search the same two ways; then stores 100 more and deletes them at once (a chat deleted: more ids than the turn's
// batched read brings).
// Prints p50 / p95 of each and their ratio, then one JSON line.
import { createTestDb } from "../../testing/databases";
import { startMockLlm } from "../../testing/mock-llm";
import { saveConnection, clearConnectionCache } from "../../lib/llm/connection";
import { embedPending } from "../../lib/memory/embed";
import { nearestMessages } from "../../lib/memory/vectors";
import { percentile, round, table } from "./stats";

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const MODEL = "mock-embed-512";

const mock = await startMockLlm();
const t = await createTestDb("pglite");
const db = t.db;
const admin = (await db.user.create({ data: { email: "vectors-admin@example.com", role: "ADMIN" } })).id;
await saveConnection(
  db,
  { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-chat", embeddingModel: MODEL },
  admin,
);
clearConnectionCache(db);
const user = (await db.user.create({ data: { email: "vectors@example.com" } })).id;
const thread = (await db.thread.create({ data: { userId: user, title: "t" } })).id;
// The user's history, stored as the embed job stores it (a vector and the storing transaction), in batches.
for (let b = 0; b < MESSAGES; b += 1000) {
  await db.$executeRaw`
    INSERT INTO "Item" (id, "threadId", "userId", position, role, content, "searchTokens", tokens, "embeddingModel",
                        embedding, "vectorSeq", "createdAt", "updatedAt")
    SELECT 'h' || g, ${thread}, ${user}, g, 'user', 'x', '', 1, ${MODEL},
           (SELECT array_agg(random() - 0.5)::real[] FROM generate_series(1, 512) WHERE g >= 0),
           pg_current_xact_id()::text::bigint, now(), now()
    FROM generate_series(${b}::int, ${Math.min(MESSAGES, b + 1000) - 1}::int) g
  `;
}
const q = Array.from({ length: 512 }, () => Math.random() - 0.5);
const kept: number[] = [];
const all: number[] = [];
const keptAfterDelete: number[] = [];
const allAfterDelete: number[] = [];
const keptAfterBulk: number[] = [];
const allAfterBulk: number[] = [];
const BULK = 100;
/** The next search timed on the kept client and on a fresh one. */
async function timeSearch(keptTimes: number[], allTimes: number[]) {
  let s = performance.now();
  await nearestMessages(db, user, MODEL, q, 120);
  keptTimes.push(performance.now() - s);
  const fresh = await t.newClient();
  s = performance.now();
  await nearestMessages(fresh.db, user, MODEL, q, 120);
  allTimes.push(performance.now() - s);
  await fresh.close();
}
await nearestMessages(db, user, MODEL, q, 120); // the kept client's first (full) read
for (let r = 0; r < ROUNDS; r++) {
  // Content is sealed per user; an unsealed test text is embedded as it is by the mock (any text will do here).
  await db.$executeRaw`
    INSERT INTO "Item" (id, "threadId", "userId", position, role, content, "searchTokens", tokens, "createdAt", "updatedAt")
    VALUES (${`n${r}`}, ${thread}, ${user}, ${MESSAGES + r}, 'user', ${`new message ${r}`}, '', 1, now(), now())
  `;
  const done = await embedPending(db, { userId: user });
  if (done.embedded !== 1) throw new Error(`expected one vector stored, got ${JSON.stringify(done)}`);
  await timeSearch(kept, all);
  // An undone turn: the message taken out again.
  await db.$executeRaw`DELETE FROM "Item" WHERE id = ${`n${r}`}`;
  await timeSearch(keptAfterDelete, allAfterDelete);
  // A chat of BULK messages with vectors, kept, then deleted at once.
  await db.$executeRaw`
    INSERT INTO "Item" (id, "threadId", "userId", position, role, content, "searchTokens", tokens, "embeddingModel",
                        embedding, "createdAt", "updatedAt")
    SELECT 'b' || g, ${thread}, ${user}, ${MESSAGES + ROUNDS} + g, 'user', 'x', '', 1, ${MODEL},
           (SELECT array_agg(random() - 0.5)::real[] FROM generate_series(1, 512) WHERE g >= 0), now(), now()
    FROM generate_series(1, ${BULK}::int) g
  `;
  await nearestMessages(db, user, MODEL, q, 120);
  await db.$executeRaw`DELETE FROM "Item" WHERE id LIKE 'b%'`;
  await timeSearch(keptAfterBulk, allAfterBulk);
}
const row = (name: string, v: number[]) => ({
  read: name,
  p50_ms: round(percentile(v, 50)),
  p95_ms: round(percentile(v, 95)),
});
console.log(`Kept vectors: ${MESSAGES} messages, ${ROUNDS} rounds, PGlite, ${new Date().toISOString().slice(0, 10)}`);
console.log(
  table([
    row("after a new vector: rows stored since (kept)", kept),
    row("after a new vector: all rows (fresh client)", all),
    row("after a deletion: its id (kept)", keptAfterDelete),
    row("after a deletion: all rows (fresh client)", allAfterDelete),
    row(`after ${BULK} deleted at once: their ids (kept)`, keptAfterBulk),
    row(`after ${BULK} deleted at once: all rows (fresh client)`, allAfterBulk),
  ]),
);
const ratio = round(percentile(kept, 50) / percentile(all, 50), 3);
console.log(
  JSON.stringify({
    messages: MESSAGES,
    kept_p50: row("", kept).p50_ms,
    kept_p95: row("", kept).p95_ms,
    all_p50: row("", all).p50_ms,
    all_p95: row("", all).p95_ms,
    ratio_p50: ratio,
    deleted_kept_p50: row("", keptAfterDelete).p50_ms,
    deleted_all_p50: row("", allAfterDelete).p50_ms,
    bulk_deleted_kept_p50: row("", keptAfterBulk).p50_ms,
    bulk_deleted_kept_p95: row("", keptAfterBulk).p95_ms,
  }),
);
await t.close();
await mock.close();
