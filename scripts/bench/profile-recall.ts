// Diagnostic, not a benchmark: builds the bench:context layout (threads of
// BENCH_SIZES messages, 1,000 memories) once and prints EXPLAIN ANALYZE of
// recall's passage search on the largest thread. `DATABASE_URL=… npx tsx scripts/bench/profile-recall.ts`
import { benchEngines } from "./env";
import { threadCipher } from "@/testing/ciphers";
const { createTestDb } = await import("../../testing/databases");
const { appendItems } = await import("../../lib/memory/session");
const { recall } = await import("../../lib/memory/recall");
const { userContext } = await import("../../lib/user-context");
const { countTokens } = await import("../../lib/memory/tokens");

const SIZES = (process.env.BENCH_SIZES ?? "100,1000,10000,100000").split(",").map(Number);
const VOCAB = Array.from(
  { length: 5000 },
  (_, i) => i.toString(36).replace(/\d/g, (d) => "qxzjvwkyfb"[Number(d)]) + "o",
);
let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const zipf = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rand() * Math.log(VOCAB.length))) - 1)];
const sentence = (i: number) => Array.from({ length: 25 + (i % 20) }, zipf).join(" ");
const WORDS = VOCAB.slice(20, 400);

const engine = benchEngines().at(-1)!;
const t = await createTestDb(engine);
const user = await t.db.user.create({ data: { email: "p@example.com" } });
await t.db.memory.createMany({
  data: Array.from({ length: 1000 }, (_, i) => {
    const text = `Memory ${i}: ${sentence(i * 13).slice(0, 120)}`;
    return { userId: user.id, text, source: "inferred" as const, tokens: countTokens(text) };
  }),
});
let current = "";
for (const size of SIZES) {
  const th = await t.db.thread.create({ data: { userId: user.id } });
  for (let i = 0; i < size; i += 500) {
    await appendItems(
      t.db,
      th.id,
      Array.from({ length: Math.min(500, size - i) }, (_, k) => ({
        role: (i + k) % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: sentence(i + k),
      })),
      { cipher: await threadCipher(t.db, th.id) },
    );
  }
  current = th.id;
}
// The upkeep bench:context runs (statistics, GIN pending lists merged).
const { UPKEEP_SQL } = await import("../../lib/db/statistics");
for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
// Log every query's time during recall.
const timed = t.db.$extends({
  query: {
    $allOperations: async ({ args, query, operation, model }) => {
      const t0 = performance.now();
      try {
        return await query(args);
      } finally {
        const sql = operation.startsWith("$")
          ? String((args as unknown[])[0] ?? "")
              .replace(/\s+/g, " ")
              .slice(0, 90)
          : `${model}.${operation}`;
        if (process.env.PROFILE_LOG) console.log(`${(performance.now() - t0).toFixed(1).padStart(7)} ms  ${sql}`);
      }
    },
  },
}) as unknown as typeof t.db;
const explainOf: Array<[string, unknown[]]> = [];
const capture = t.db.$extends({
  query: {
    $allOperations: async ({ args, query, operation }) => {
      if (operation.startsWith("$queryRaw"))
        explainOf.push([(args as unknown[])[0] as string, (args as unknown[]).slice(1)]);
      return query(args);
    },
  },
}) as unknown as typeof t.db;
if (process.env.PROFILE_WINDOW) {
  const { loadContext } = await import("../../lib/chat/context");
  const leafRow = await t.db.item.findFirstOrThrow({ where: { threadId: current }, orderBy: { position: "desc" } });
  await loadContext(capture, current, leafRow.id, { cipher: await threadCipher(capture, current) });
}
await recall(await userContext(capture, user.id), `what did we say about the ${WORDS[5]} and memory 5?`, {
  budget: 800,
  excludeThreadId: current,
});
for (const [sql, params] of process.env.PROFILE_EXPLAIN ? explainOf : []) {
  const rows = await t.db.$queryRawUnsafe<Array<Record<string, string>>>(
    `EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
    ...params,
  );
  console.log(sql.replace(/\s+/g, " ").slice(0, 80));
  console.log(rows.map((r) => r["QUERY PLAN"]).join("\n"), "\n");
}
// Experiment: the index lookup of rare words with and without "NOT this thread" inside the index.
if (process.env.PROFILE_NOT) {
  for (const w of WORDS.slice(100, 104)) {
    for (const [name, sql] of [
      [
        "with NOT tag",
        `SELECT count(*) FROM "Item" i WHERE i.search @@ (mnemo_user_query($1, 'simple', $2) && mnemo_not_thread($3))`,
      ],
      [
        "filter after",
        `SELECT count(*) FROM "Item" i WHERE i.search @@ mnemo_user_query($1, 'simple', $2) AND i."threadId" <> $3`,
      ],
    ]) {
      const [, rows] = await t.db.$transaction([
        t.db.$executeRawUnsafe("SET LOCAL enable_seqscan = off"),
        t.db.$queryRawUnsafe<Array<Record<string, string>>>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, user.id, w, current),
      ]);
      console.log(
        w,
        name,
        rows
          .map((r) => r["QUERY PLAN"])
          .filter((l) => /Execution|Heap Blocks|Bitmap Index|Rows Removed|actual/.test(l))
          .join(" | ")
          .slice(0, 400),
      );
    }
  }
}
if (process.env.PROFILE_SQL_BEFORE) await t.db.$executeRawUnsafe(process.env.PROFILE_SQL_BEFORE);
// Planning alone (EXPLAIN without ANALYZE) against planning plus execution, per query.
for (const [sql, params] of process.env.PROFILE_PLAN ? explainOf : []) {
  const time = async (q: string) => {
    const ts: number[] = [];
    for (let i = 0; i < 25; i++) {
      const t0 = performance.now();
      await t.db.$queryRawUnsafe(q, ...params);
      if (i >= 5) ts.push(performance.now() - t0);
    }
    return ts.sort((a, b) => a - b)[10].toFixed(2);
  };
  console.log(
    `plan ${await time(`EXPLAIN ${sql}`)} ms, plan+run ${await time(sql)} ms  ${sql.replace(/\s+/g, " ").slice(0, 60)}`,
  );
}
// Experiment: the passage query wrapped in a PL/pgSQL function (plans cached per session).
if (process.env.PROFILE_PLPGSQL) {
  const [sql, params] = explainOf.find(([q]) => q.includes("Each word as a query"))!;
  await t.db
    .$executeRawUnsafe(`CREATE OR REPLACE FUNCTION scratch_passages(text, text, int, int, text[], int, regconfig, timestamp, timestamp[], timestamp[], float8, int)
    RETURNS TABLE (hit text, "hitPosition" int, "hitAt" timestamp(3), rank float8, id text, "threadId" text, "position" int, role text, content text, "sourceRef" text, title text, "createdAt" timestamp(3))
    LANGUAGE plpgsql STABLE AS $fn$
    #variable_conflict use_column
    BEGIN RETURN QUERY ${sql}; END $fn$`);
  const call = `SELECT * FROM scratch_passages($1, $2, $3::int, $4::int, $5::text[], $6::int, $7::regconfig, $8::timestamp, $9::timestamp[], $10::timestamp[], $11::float8, $12::int)`;
  for (const [name, q] of [
    ["raw", sql],
    ["plpgsql", call],
    ["raw", sql],
    ["plpgsql", call],
  ] as const) {
    const ts: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t0 = performance.now();
      await t.db.$queryRawUnsafe(q, ...params);
      if (i >= 10) ts.push(performance.now() - t0);
    }
    ts.sort((a, b) => a - b);
    console.log(`passages ${name}: p50 ${ts[25].toFixed(2)} ms, p95 ${ts[47].toFixed(2)} ms`);
  }
}
const totals: number[] = [];
for (let i = 0; i < Number(process.env.PROFILE_RUNS ?? 30); i++) {
  const q = `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`;
  process.env.PROFILE_LOG = process.env.PROFILE_LOG_ALL || i % 20 === 19 ? "1" : "";
  const t0 = performance.now();
  const r = await recall(await userContext(timed, user.id), q, { budget: 800, excludeThreadId: current });
  totals.push(performance.now() - t0);
  if (process.env.PROFILE_LOG)
    console.log(
      `recall total ${(performance.now() - t0).toFixed(1)} ms, ${r.passages.length} passages, ${r.tokens} tokens\n`,
    );
}
// Each part alone (sequentially), to see where the fixed cost goes.
const { loadContext } = await import("../../lib/chat/context");
const { loadProfile } = await import("../../lib/memory/profile");
const { searchMemories, queryTerms } = await import("../../lib/memory/long-term");
const leaf = await t.db.item.findFirstOrThrow({ where: { threadId: current }, orderBy: { position: "desc" } });
const u = await userContext(t.db, user.id);
const parts: Record<string, (i: number) => Promise<unknown>> = {
  window: () => loadContext(t.db, current, leaf.id, { cipher: u.cipher }),
  profile: () => loadProfile(u, 134, 800),
  memorySearch: (i) =>
    searchMemories(u, `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`, 40),
  recallNoPassages: (i) =>
    recall(u, `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`, {
      budget: 800,
      passages: false,
    }),
  select1: () => t.db.$queryRawUnsafe("SELECT 1"),
  passagesAlone: (i) => {
    const [sql, params] = explainOf.find(([q]) => q.includes("mnemo_recall_passages"))!;

    return t.db.$queryRawUnsafe(
      sql,
      ...params.slice(0, 4),
      queryTerms(`what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`),
      ...params.slice(5),
    );
  },
};
for (const [name, fn] of Object.entries(parts)) {
  const ts: number[] = [];
  for (let i = 0; i < Number(process.env.PROFILE_PART_RUNS ?? 60); i++) {
    const t0 = performance.now();
    await fn(i);
    if (i >= 10) ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(18)} p50 ${ts[Math.floor(ts.length / 2)].toFixed(1)} ms, p95 ${ts[Math.floor(ts.length * 0.95)].toFixed(1)} ms`,
  );
}
totals.sort((a, b) => a - b);
console.log(
  `recall p50 ${totals[Math.floor(totals.length / 2)].toFixed(1)} ms, p95 ${totals[Math.floor(totals.length * 0.95)].toFixed(1)} ms`,
);
await t.close();
