// `npm run bench:import`: conversation import throughput and peak memory on a
// generated ChatGPT export of 100,000 messages (BENCH_CONVERSATIONS x
// BENCH_MESSAGES; every tenth conversation has an edited branch), on PGlite
// and (with DATABASE_URL) PostgreSQL (BENCH_ENGINES=pglite,postgres|none). The baseline, measured in the same run,
// is reading and parsing the same file without storing anything: the ratio
// says what storing costs. Peak heap staying far below the file's size shows
// that the file is streamed. Then "learn from this history" reads its first
// 50 exchanges with the test server answering at once: the time per exchange
// is the job's own cost (claiming the next exchange, storing what it learns),
// which must not grow with the size of the import. Prints a table, then one JSON line.
import os from "node:os";
import type { Db } from "@/lib/db/types";
import { userContext } from "@/lib/user-context";
import fs from "node:fs";
import path from "node:path";
import { benchEngines } from "./env";

const { createTestDb } = await import("../../testing/databases");
const { importConversations } = await import("../../lib/import/run");
const { readExport } = await import("../../lib/import/read");
const { round, table, percentile } = await import("./stats");
const { learnFromImports, startLearning } = await import("../../lib/import/learn");
const { UPKEEP_SQL } = await import("../../lib/db/statistics");
const { startMockLlm } = await import("../../testing/mock-llm");
const { saveConnection, clearConnectionCache, resolveConnection } = await import("../../lib/llm/connection");

const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 1000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100);
const WORDS =
  "the a dog cat trip city train recipe garden sister brother work nurse hospital marathon book music paris lisbon porto coffee tea bread weekend plan budget flight hotel museum river mountain".split(
    " ",
  );

/** Writes the export to disk piece by piece (the generator never holds it whole either). */
async function generate(file: string): Promise<number> {
  const out = fs.createWriteStream(file);
  const write = (s: string) =>
    out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once("drain", () => r()));
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sentence = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(" ");
  let total = 0;
  await write("[");
  for (let c = 0; c < CONVERSATIONS; c++) {
    const mapping: Record<string, unknown> = { root: { id: "root", message: null, parent: null, children: [] } };
    let parent = "root";
    const start = 1_600_000_000 + c * 3600;
    for (let m = 0; m < MESSAGES; m++) {
      const id = `c${c}m${m}`;
      const role = m % 2 === 0 ? "user" : "assistant";
      mapping[id] = {
        id,
        parent,
        children: [],
        message: {
          id,
          author: { role },
          create_time: start + m * 30,
          content: { content_type: "text", parts: [sentence(role === "user" ? 12 : 40)] },
          status: "finished_successfully",
          metadata: {},
        },
      };
      (mapping[parent] as { children: string[] }).children.push(id);
      parent = id;
      total++;
    }
    let current = parent;
    if (c % 10 === 0 && MESSAGES >= 4) {
      // An edited question near the end, with its own answer.
      const base = `c${c}m${MESSAGES - 3}`;
      for (const [k, role] of [
        ["e1", "user"],
        ["e2", "assistant"],
      ] as const) {
        const id = `c${c}${k}`;
        const par = k === "e1" ? base : `c${c}e1`;
        mapping[id] = {
          id,
          parent: par,
          children: [],
          message: {
            id,
            author: { role },
            create_time: start + MESSAGES * 30 + 60,
            content: { content_type: "text", parts: [sentence(20)] },
            metadata: {},
          },
        };
        (mapping[par] as { children: string[] }).children.push(id);
        total++;
      }
      current = `c${c}e2`;
    }
    await write(
      `${c ? "," : ""}${JSON.stringify({ title: `Conversation ${c}: ${sentence(4)}`, create_time: start, update_time: start + MESSAGES * 30, conversation_id: `bench-${c}`, current_node: current, mapping })}`,
    );
  }
  await write("]");
  await new Promise<void>((r) => out.end(() => r()));
  return total;
}

/** Runs `fn`, sampling the heap and RSS every 20 ms; returns seconds and peaks (MB above the start). */
async function measure<T>(fn: () => Promise<T>) {
  global.gc?.();
  const base = process.memoryUsage();
  let heap = 0;
  let rss = 0;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed - base.heapUsed);
    rss = Math.max(rss, m.rss - base.rss);
  }, 20);
  const t0 = performance.now();
  const value = await fn();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  return { value, seconds, heapMb: heap / 2 ** 20, rssMb: rss / 2 ** 20 };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-import-bench-"));
const file = path.join(dir, "conversations.json");
const messages = await generate(file);
const sizeMb = fs.statSync(file).size / 2 ** 20;
console.log(`generated ${CONVERSATIONS} conversations, ${messages} messages, ${round(sizeMb, 1)} MB`);

const parse = await measure(async () => {
  let n = 0;
  for await (const e of readExport(fs.createReadStream(file)))
    if (e.kind === "conversation") n += e.conversation.messages.length;
  return n;
});
const rows: Array<Record<string, string | number | null>> = [
  {
    engine: "parse only (baseline)",
    seconds: round(parse.seconds, 1),
    "messages/s": Math.round(parse.value / parse.seconds),
    "peak heap MB": round(parse.heapMb, 0),
    "peak rss MB": round(parse.rssMb, 0),
    ratio: 1,
  },
];
const results: Record<string, unknown> = { messages, fileMb: round(sizeMb, 1), parseSeconds: round(parse.seconds, 2) };
// BENCH_ENGINES=none measures the parse alone (e.g. on a larger file, to see the heap stay flat).
const engines = (process.env.BENCH_ENGINES ?? benchEngines().join(","))
  .split(",")
  .filter((e) => e === "pglite" || e === "postgres");
const learnRows: Array<Record<string, string | number | null>> = [];
/** Times one exchange at a time of "learn from this history" (50 of them). */
async function learnTimes(db: Db, userId: string): Promise<number[]> {
  const mock = await startMockLlm();
  mock.script({ json: { decisions: [] }, times: 0 });
  await saveConnection(db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-chat" }, userId);
  clearConnectionCache(db);
  const state = await resolveConnection(db);
  if (!state.configured) throw new Error("the test server's connection was not saved");
  const conn = state.connection;
  await startLearning(db, userId);
  const times: number[] = [];
  const u = await userContext(db, userId);
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    await learnFromImports(u, conn, { perRun: 1 });
    times.push(performance.now() - t0);
  }
  await mock.close();
  return times;
}
for (const engine of engines as Array<"pglite" | "postgres">) {
  const t = await createTestDb(engine);
  const user = await t.db.user.create({ data: { email: `bench-${engine}@example.com` } });
  const u = await userContext(t.db, user.id);
  const run = await measure(() => importConversations(u, fs.createReadStream(file)));
  const again = await measure(() => importConversations(u, fs.createReadStream(file)));
  if (run.value.messages !== messages || again.value.conversations !== 0)
    throw new Error(
      `unexpected report: ${JSON.stringify({ first: run.value.messages, again: again.value.conversations })}`,
    );
  rows.push({
    engine,
    seconds: round(run.seconds, 1),
    "messages/s": Math.round(messages / run.seconds),
    "peak heap MB": round(run.heapMb, 0),
    "peak rss MB": round(run.rssMb, 0),
    ratio: round(run.seconds / parse.seconds, 1),
  });
  rows.push({
    engine: `${engine}, same file again`,
    seconds: round(again.seconds, 1),
    "messages/s": null,
    "peak heap MB": round(again.heapMb, 0),
    "peak rss MB": round(again.rssMb, 0),
    ratio: round(again.seconds / parse.seconds, 1),
  });
  // What the app does after a large import (app/api/import/route.ts): planner statistics, search-index upkeep.
  for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
  const learnMs = await learnTimes(t.db, user.id);
  learnRows.push({
    engine,
    exchanges: learnMs.length,
    "p50 ms": round(percentile(learnMs, 50)),
    "p95 ms": round(percentile(learnMs, 95)),
  });
  results[engine] = {
    seconds: round(run.seconds, 2),
    messagesPerSecond: Math.round(messages / run.seconds),
    peakHeapMb: round(run.heapMb, 0),
    peakRssMb: round(run.rssMb, 0),
    againSeconds: round(again.seconds, 2),
    learnMsPerExchangeP50: round(percentile(learnMs, 50)),
  };
  await t.close();
}
console.log(table(rows));
if (learnRows.length)
  console.log(`Learning from the import, per exchange (test server answering at once):\n${table(learnRows)}`);
console.log(JSON.stringify(results));
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
