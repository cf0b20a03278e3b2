// `npm run bench:consolidate`: memory consolidation on a synthetic set of
// 1,000 memories for one user, with planted duplicates (same words in other
// case and punctuation), paraphrased duplicates, contradictions (some between
// two things the user said, which must go to the user) and many distinct
// look-alike facts ("colleague Ana lives in Porto" / "colleague Rui lives in
// Porto"). Runs until no follow-up run is queued, on PGlite and (with
// DATABASE_URL) PostgreSQL, and reports merge precision and recall,
// contradictions resolved, wrong merges (must be 0), model calls and time.
//
// The judge: by default an oracle that answers from the planted truth, so the
// figures measure the mechanism (which pairs it finds, how it applies
// verdicts and precedence), not a model. BENCH_JUDGE_BASE_URL, _MODEL and
// _API_KEY use a real OpenAI-compatible memory model instead.
import http from "node:http";
import { userContext } from "@/lib/user-context";
import { benchEngines } from "./env";

const { createTestDb } = await import("../../testing/databases");
const { consolidateUser } = await import("../../lib/memory/consolidate");
const { normalizeText } = await import("../../lib/memory/long-term");
const { round, table } = await import("./stats");

type Planted = {
  text: string;
  source: "explicit" | "manual" | "inferred";
  ageDays: number;
  role: "base" | "dup" | "para" | "contra";
  of?: number;
};

const RELATIONS = [
  "sister",
  "brother",
  "cousin",
  "colleague",
  "neighbour",
  "friend",
  "aunt",
  "uncle",
  "classmate",
  "teammate",
];
const NAMES = [
  "Ana",
  "Rui",
  "Marta",
  "Tiago",
  "Ines",
  "Joao",
  "Sofia",
  "Pedro",
  "Clara",
  "Diogo",
  "Rita",
  "Nuno",
  "Lara",
  "Hugo",
  "Vera",
  "Luis",
  "Eva",
  "Paulo",
  "Joana",
  "Bruno",
  "Carla",
  "Miguel",
  "Sara",
  "Andre",
  "Beatriz",
  "Filipe",
  "Helena",
  "Goncalo",
  "Teresa",
  "Ricardo",
];
const CITIES = [
  "Porto",
  "Lisbon",
  "Braga",
  "Coimbra",
  "Faro",
  "Madrid",
  "Lyon",
  "Berlin",
  "Oslo",
  "Dublin",
  "Ghent",
  "Turin",
  "Krakow",
  "Vienna",
  "Seville",
  "Nantes",
  "Bergen",
  "Leeds",
  "Basel",
  "Bruges",
];
const JOBS = [
  "nurse",
  "teacher",
  "plumber",
  "chemist",
  "pilot",
  "baker",
  "architect",
  "lawyer",
  "farmer",
  "designer",
  "surgeon",
  "journalist",
];

/** The planted set: 700 distinct facts, then 100 of each kind of trouble. */
function plant(): Planted[] {
  const out: Planted[] = [];
  let r = 7;
  const rand = (n: number) => ((r = (r * 48271) % 2147483647), r % n);
  const subjects = RELATIONS.flatMap((rel) => NAMES.map((n) => `${rel[0].toUpperCase()}${rel.slice(1)} ${n}`)); // 300
  const city = new Map<string, string>();
  for (const s of subjects) {
    const c = CITIES[rand(CITIES.length)];
    city.set(s, c);
    out.push({
      text: `${s} lives in ${c}`,
      source: rand(3) === 0 ? "explicit" : "inferred",
      ageDays: 30 + rand(300),
      role: "base",
    });
    out.push({
      text: `${s} works as a ${JOBS[rand(JOBS.length)]}`,
      source: "inferred",
      ageDays: 30 + rand(300),
      role: "base",
    });
  }
  for (const s of subjects.slice(0, 100))
    out.push({
      text: `${s} has a dog named ${NAMES[rand(NAMES.length)]}`,
      source: "inferred",
      ageDays: 30 + rand(300),
      role: "base",
    });
  // Each kind of trouble on its own subjects: index 2s is subject s's "lives in", 2s+1 its "works as".
  for (let k = 0; k < 100; k++) {
    const i = 2 * k + 1;
    out.push({ text: `${out[i].text.toLowerCase()}.`, source: "inferred", ageDays: rand(20), role: "dup", of: i });
  }
  for (let k = 0; k < 100; k++) {
    const i = 2 * (100 + k);
    const p = out[i];
    const para = p.text.replace(" lives in ", " resides in ").replace(" works as a ", " is employed as a ");
    out.push({ text: para, source: "inferred", ageDays: rand(20), role: "para", of: i });
  }
  for (let k = 0; k < 100; k++) {
    // A move: the same person, another city.
    const i = 2 * (200 + k);
    const p = out[i];
    const subject = p.text.split(" lives in ")[0];
    const moved = CITIES.find((c, j) => c !== city.get(subject) && j >= k % CITIES.length) ?? "Reykjavik";
    out.push({
      text: `${subject} lives in ${moved}`,
      source: k % 4 === 0 ? "explicit" : "inferred",
      ageDays: rand(20),
      role: "contra",
      of: i,
    });
  }
  return out;
}

const planted = plant();
const truth = new Map<string, "same" | "conflict">();
const key = (a: string, b: string) => [normalizeText(a), normalizeText(b)].sort().join(" | ");
for (const p of planted)
  if (p.of !== undefined) truth.set(key(p.text, planted[p.of].text), p.role === "contra" ? "conflict" : "same");

/** The oracle: an OpenAI-compatible endpoint that judges pairs from the planted truth. */
async function startOracle(): Promise<{ url: string; calls: () => number; close: () => void }> {
  let calls = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      calls++;
      const user = String(JSON.parse(body).messages?.at(-1)?.content ?? "");
      const pairs = [...user.matchAll(/^(\d+)\. A: (".*")\n {3}B: (".*")$/gm)].map((m) => ({
        pair: Number(m[1]),
        verdict: truth.get(key(JSON.parse(m[2]), JSON.parse(m[3]))) ?? "different",
      }));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 0,
          model: "oracle",
          choices: [
            {
              index: 0,
              finish_reason: "stop",
              message: { role: "assistant", content: JSON.stringify({ verdicts: pairs }) },
            },
          ],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`,
    calls: () => calls,
    close: () => server.close(),
  };
}

const oracle = process.env.BENCH_JUDGE_BASE_URL ? null : await startOracle();
const conn = oracle
  ? { baseURL: oracle.url, apiKey: "oracle", chatModel: "oracle", memoryModel: "oracle" }
  : {
      baseURL: process.env.BENCH_JUDGE_BASE_URL,
      apiKey: process.env.BENCH_JUDGE_API_KEY ?? "none",
      chatModel: process.env.BENCH_JUDGE_MODEL!,
      memoryModel: process.env.BENCH_JUDGE_MODEL!,
    };

const rows: Array<Record<string, string | number | null>> = [];
const results: Record<string, unknown> = { memories: planted.length, judge: oracle ? "oracle" : conn.memoryModel };
for (const engine of benchEngines()) {
  const t = await createTestDb(engine);
  const user = await t.db.user.create({ data: { email: `bench-${engine}@example.com` } });
  const now = Date.now();
  const ids: string[] = [];
  for (const p of planted) {
    const at = new Date(now - p.ageDays * 86_400_000);
    const m = await t.db.memory.create({
      data: { userId: user.id, text: p.text, source: p.source, confidence: 0.9, createdAt: at, updatedAt: at },
    });
    ids.push(m.id);
  }
  const t0 = performance.now();
  let runs = 0;
  let calls = 0;
  let judged = 0;
  for (;;) {
    runs++;
    const c = await consolidateUser(await userContext(t.db, user.id), conn);
    calls += c.modelCalls;
    judged += c.pairsJudged;
    if (!c.more) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = new Map((await t.db.memory.findMany({ where: { userId: user.id } })).map((m) => [m.id, m]));
  let rightMerges = 0, wrongArchives = 0, settled = 0, flagged = 0; // prettier-ignore
  // Retired: archived, or (a settled contradiction whose loser was true before) kept as past.
  const retired = (m: { status: string }) => m.status === "archived" || m.status === "past";
  const dupPlanted = planted.filter((p) => p.role === "dup" || p.role === "para").length;
  planted.forEach((p, i) => {
    const m = after.get(ids[i])!;
    const base = p.of !== undefined ? after.get(ids[p.of])! : null;
    if (p.role === "dup" || p.role === "para") {
      // One of the two archived, the other active.
      if ((m.status === "archived") !== (base!.status === "archived")) rightMerges++;
    } else if (p.role === "contra") {
      if (retired(m) !== retired(base!)) settled++;
      else if (m.conflictWithId === base!.id || base!.conflictWithId === m.id) flagged++;
    }
  });
  // An archived memory that is neither planted trouble nor the other side of one is a wrong merge.
  const troubled = new Set(planted.flatMap((p, i) => (p.of !== undefined ? [ids[i], ids[p.of]] : [])));
  for (const [id, m] of after) if (retired(m) && !troubled.has(id)) wrongArchives++;
  const archivedDupPairs = planted.filter(
    (p, i) => (p.role === "dup" || p.role === "para") && after.get(ids[i])!.status === "archived",
  ).length;
  const precision = rightMerges / Math.max(1, rightMerges + wrongArchives);
  rows.push({
    engine,
    seconds: round(seconds, 2),
    runs,
    "model calls": calls,
    "pairs judged": judged,
    "merge recall": round(rightMerges / dupPlanted, 3),
    "merge precision": round(precision, 3),
    // Found: settled (one side closed, as archived or as past) or put to the user as a conflict.
    "contradictions found": settled + flagged,
    "contradictions settled": settled,
    "left to the user": flagged,
    "wrong merges": wrongArchives,
  });
  results[engine] = {
    seconds: round(seconds, 2),
    runs,
    modelCalls: calls,
    pairsJudged: judged,
    mergeRecall: round(rightMerges / dupPlanted, 3),
    mergePrecision: round(precision, 3),
    contradictionsFound: settled + flagged,
    contradictionsSettled: settled,
    leftToUser: flagged,
    contradictionsPlanted: 100,
    wrongMerges: wrongArchives,
    duplicateCopiesArchived: archivedDupPairs,
  };
  await t.close();
}
console.log(table(rows));
console.log(JSON.stringify(results));
oracle?.close();
process.exit(0);
