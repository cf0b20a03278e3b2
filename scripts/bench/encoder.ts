// `npm run bench:encoder`: the built-in encoder's cost per call in a worker (lib/llm/encoder-worker.ts), the graph
// run in one pass against the package's own way (op by op, `executeAsync`) in the same run: two workers, each call
// made on both in turn, so the machine's noise falls on both alike. Short questions, questions of LoCoMo's length,
// and batches of eight messages (the embed job's calls). Prints p50 / p95 of each, their ratio, whether every vector
// was the same both ways, then one JSON line.
import path from "node:path";
import { Worker } from "node:worker_threads";
import { ENCODER_WORKER_SOURCE } from "../../lib/llm/encoder-worker";
import { percentile, round, table } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);

type Reply = { id: number; vectors?: number[][]; error?: string; direct?: boolean };

function encoder(direct: boolean) {
  const worker = new Worker(ENCODER_WORKER_SOURCE, {
    eval: true,
    workerData: { base: path.join(process.cwd(), "package.json"), direct },
  });
  const waiting = new Map<number, (r: Reply) => void>();
  worker.on("message", (r: Reply) => waiting.get(r.id)?.(r));
  let next = 0;
  const call = (texts: string[]) =>
    new Promise<Reply>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      worker.postMessage({ id, texts });
    });
  return { call, close: () => worker.terminate() };
}

const direct = encoder(true);
const baseline = encoder(false);
await Promise.all([direct.call(["warm up"]), baseline.call(["warm up"])]);

const message = "I went hiking with my family last weekend up in the mountains near the lake. The kids loved it! ";
const cases: Array<[string, (i: number) => string[], number]> = [
  ["short question", (i) => [`question ${i}`], ROUNDS],
  ["question (LoCoMo length)", (i) => [`What did Caroline say about the adoption agency and her plans, ${i}?`], ROUNDS],
  ["8 messages", (i) => Array.from({ length: 8 }, (_, k) => message.repeat(1 + (k % 3)) + i), Math.ceil(ROUNDS / 5)],
];

const rows = [];
const json: Record<string, unknown> = {};
for (const [name, texts, n] of cases) {
  const times = { direct: [] as number[], baseline: [] as number[] };
  let same = true;
  let oneCall = true;
  for (let i = 0; i < n; i++) {
    const t = texts(i);
    let t0 = performance.now();
    const a = await direct.call(t);
    times.direct.push(performance.now() - t0);
    t0 = performance.now();
    const b = await baseline.call(t);
    times.baseline.push(performance.now() - t0);
    oneCall &&= a.direct === true;
    same &&= JSON.stringify(a.vectors) === JSON.stringify(b.vectors);
  }
  const ratio = percentile(times.direct, 50) / percentile(times.baseline, 50);
  rows.push({
    texts: name,
    calls: n,
    one_pass_p50_ms: round(percentile(times.direct, 50)),
    one_pass_p95_ms: round(percentile(times.direct, 95)),
    package_p50_ms: round(percentile(times.baseline, 50)),
    package_p95_ms: round(percentile(times.baseline, 95)),
    ratio_p50: round(ratio),
    one_pass_used: oneCall ? "yes" : "no",
    same_vectors: same ? "yes" : "no",
  });
  json[name] = { p50: round(percentile(times.direct, 50)), baseline_p50: round(percentile(times.baseline, 50)), same };
}
console.log(table(rows));
console.log(JSON.stringify(json));
await Promise.all([direct.close(), baseline.close()]);
