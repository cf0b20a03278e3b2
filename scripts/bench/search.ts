// Content search over a long history (lib/chat/search.ts): one user with
// BENCH_SEARCH_MESSAGES (100,000) messages in 100 threads, words drawn from a
// Zipf vocabulary (a few very common words, many rare ones), other users beside
// them. Times the first page of hits for rare, middling and common words and for
// two-word queries, on PGlite and (with DATABASE_URL) PostgreSQL, with `SELECT 1`
// as the machine's floor in the same run. Target (#28): p95 ≤ 50 ms on both.
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { benchEngines } from "./env";

const { createTestDb } = await import("../../testing/databases");
const { appendItems } = await import("../../lib/memory/session");
const { searchMessages } = await import("../../lib/chat/search");
const { UPKEEP_SQL } = await import("../../lib/db/statistics");
const { percentile, round, table } = await import("./stats");

const MESSAGES = Number(process.env.BENCH_SEARCH_MESSAGES ?? 100_000);
const THREADS = 100;
const QUERIES = Number(process.env.BENCH_SEARCH_QUERIES ?? 100);
const VOCAB = Array.from(
  { length: 5000 },
  (_, i) => i.toString(36).replace(/\d/g, (d) => "qxzjvwkyfb"[Number(d)]) + "o",
);
let seed = 11;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const zipf = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rand() * Math.log(VOCAB.length))) - 1)];
const sentence = (i: number) => Array.from({ length: 25 + (i % 20) }, zipf).join(" ");
const pick = (from: number, to: number) => VOCAB[from + Math.floor(rand() * (to - from))];
const KINDS: Record<string, () => string> = {
  rare: () => pick(2000, 5000),
  middling: () => pick(200, 2000),
  common: () => pick(5, 50),
  "two words": () => `${pick(20, 400)} ${pick(200, 2000)}`,
};

async function benchEngine(engine: "pglite" | "postgres") {
  const t = await createTestDb(engine);
  const user = await t.db.user.create({ data: { email: `search-bench-${engine}@example.com` } });
  const other = await t.db.user.create({ data: { email: `search-other-${engine}@example.com` } });
  const started = Date.now();
  for (const [owner, count] of [
    [user.id, MESSAGES],
    [other.id, MESSAGES / 10],
  ] as const) {
    for (let th = 0; th < THREADS; th++) {
      const thread = await t.db.thread.create({ data: { userId: owner } });
      const perThread = count / THREADS;
      for (let i = 0; i < perThread; i += 500) {
        const batch = Array.from({ length: Math.min(500, perThread - i) }, (_, k) => ({
          role: (i + k) % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: sentence(th * perThread + i + k),
        }));
        await appendItems(t.db, thread.id, batch, { cipher: await threadCipher(t.db, thread.id) });
      }
    }
  }
  for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
  console.error(
    `${engine}: ${MESSAGES + MESSAGES / 10} messages written in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  const u = await userContext(t.db, user.id);
  const rows: Array<Record<string, string | number | null>> = [];
  const all: number[] = [];
  for (const [kind, query] of Object.entries(KINDS)) {
    const times: number[] = [];
    const floor: number[] = [];
    let found = 0;
    for (let i = 0; i < QUERIES + 5; i++) {
      const q = query();
      const t0 = performance.now();
      const r = await searchMessages(u, { q });
      const ms = performance.now() - t0;
      const f0 = performance.now();
      await t.db.$queryRaw<Array<{ one: number }>>`SELECT 1 AS one`;
      const floorMs = performance.now() - f0;
      if (i < 5) continue; // warm-up
      times.push(ms);
      floor.push(floorMs);
      found += r.hits.length;
    }
    all.push(...times);
    rows.push({
      engine,
      query: kind,
      p50_ms: round(percentile(times, 50)),
      p95_ms: round(percentile(times, 95)),
      hits_per_page: round(found / QUERIES, 1),
      select1_p95_ms: round(percentile(floor, 95)),
    });
  }
  await t.close();
  return { rows, p95: percentile(all, 95) };
}

const results: Record<string, number> = {};
const rows: Array<Record<string, string | number | null>> = [];
for (const engine of benchEngines()) {
  const r = await benchEngine(engine);
  rows.push(...r.rows);
  results[`${engine}_search_p95_ms`] = round(r.p95)!;
}
console.log(
  `Content search, first page of 20 hits, ${MESSAGES.toLocaleString("en")} messages (+${(MESSAGES / 10).toLocaleString("en")} of another user), ${QUERIES} queries per kind, ${new Date().toISOString().slice(0, 10)}`,
);
console.log(table(rows));
console.log(JSON.stringify(results));
