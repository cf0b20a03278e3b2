// The exact search's shortlist by signs (lib/memory/vector-scores.ts): what it finds of the whole scan's top k, and
// what it costs against the whole scan, in the same run.
//   npm run bench:shortlist -- [dataset dir]   (default ../shared/datasets/locomo/dev)
// Quality: the dev set's messages and questions, encoded by the built-in encoder (about a minute), every question
// against every message, at the shortlist the app uses and at smaller ones. Cost: the same vectors tiled (each copy
// with a little noise) to 10,000 and 50,000 rows, each question scanned whole and by the shortlist in turn.
import fs from "node:fs";
import path from "node:path";
import { embedBuiltin } from "@/lib/llm/builtin-embedder";
import { normalized, shortlist, shortlistSize, signsOf, topK } from "@/lib/memory/vector-scores";
import { percentile, round, table } from "./stats";

const dir = process.argv[2] ?? "../shared/datasets/locomo/dev";
const texts: string[] = [];
const questions: string[] = [];
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".json"))) {
  const d = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"));
  for (const [k, v] of Object.entries(d))
    if (/^session_\d+$/.test(k)) for (const t of v as Array<{ text: string }>) texts.push(t.text);
  for (const q of d.qa as Array<{ question: string }>) questions.push(q.question);
}
const started = performance.now();
const rows = await embedBuiltin(texts);
const asked = await embedBuiltin(questions);
console.log(
  `${texts.length} messages and ${questions.length} questions encoded in ${round((performance.now() - started) / 1000, 1)} s`,
);

type Set = { ids: string[]; data: Float32Array; signs: Int32Array };
function setOf(vectors: ArrayLike<number>[]): Set {
  const dims = vectors[0].length;
  const words = Math.ceil(dims / 32);
  const data = new Float32Array(vectors.length * dims);
  const signs = new Int32Array(vectors.length * words);
  vectors.forEach((v, i) => {
    const n = normalized(v);
    data.set(n, i * dims);
    signsOf(n, signs, i * words);
  });
  return { ids: vectors.map((_, i) => `r${String(i).padStart(6, "0")}`), data, signs };
}

/** The share of the whole scan's top k the shortlist of `size` rows finds. */
function found(set: Set, k: number, size: number) {
  let hits = 0;
  let first = 0;
  for (const q of asked) {
    const whole = topK(set.ids, set.data, q, k);
    const ids = new Set(listedTopK(set, q, k, size).map((h) => h.id));
    hits += whole.filter((h) => ids.has(h.id)).length;
    first += ids.has(whole[0].id) ? 1 : 0;
  }
  return { top_k_found: round(hits / (k * asked.length), 4), best_found: round(first / asked.length, 4) };
}

/** The top k of a shortlist of `size` rows (the app's when it is shortlistSize), ranked exactly. */
function listedTopK(set: Set, q: number[], k: number, size: number) {
  if (size === shortlistSize(set.ids.length, k)) return topK(set.ids, set.data, q, k, undefined, set.signs);
  const listed = shortlist(set.signs, signsOf(normalized(q)), set.ids.length, size, () => true) ?? [];
  const on = new Set(listed);
  return topK(set.ids, set.data, q, k, (i) => on.has(i));
}

const real = setOf(rows);
const quality = [];
for (const k of [40, 120]) {
  const app = shortlistSize(real.ids.length, k);
  for (const size of [...new Set([Math.ceil(app / 4), Math.ceil(app / 2), app])]) {
    quality.push({
      rows: real.ids.length,
      k,
      shortlist: size,
      app: size === app ? "yes" : "",
      ...found(real, k, size),
    });
  }
}
console.log(table(quality));

/** The real vectors repeated to `n` rows, each copy moved by a little noise (so no two rows tie). */
function tiled(n: number): Set {
  let seed = 1;
  const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 0.02;
  return setOf(Array.from({ length: n }, (_, i) => Array.from(rows[i % rows.length], (x) => x + noise())));
}

const cost = [];
for (const n of [10_000, 50_000]) {
  const set = tiled(n);
  const whole: number[] = [];
  const listed: number[] = [];
  for (const [i, q] of asked.slice(0, 300).entries()) {
    // In turn, so both meet the machine alike.
    for (const way of i % 2 ? ["listed", "whole"] : ["whole", "listed"]) {
      const t0 = performance.now();
      if (way === "whole") topK(set.ids, set.data, q, 120);
      else topK(set.ids, set.data, q, 120, undefined, set.signs);
      (way === "whole" ? whole : listed).push(performance.now() - t0);
    }
  }
  cost.push({
    rows: n,
    k: 120,
    shortlist: shortlistSize(n, 120),
    whole_p50_ms: round(percentile(whole, 50)),
    whole_p95_ms: round(percentile(whole, 95)),
    listed_p50_ms: round(percentile(listed, 50)),
    listed_p95_ms: round(percentile(listed, 95)),
    "p50 ratio": round(percentile(listed, 50) / percentile(whole, 50)),
  });
}
console.log(table(cost));
process.exit(0);
