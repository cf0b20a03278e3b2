// What related-word lookups (WordNet, lib/memory/related-words.ts) cost a question before its reads go out: each
// dev-set question's search terms in order, as a server meets them (the lookup cache warming as it goes), after the
// files are loaded as the server loads them at start.
//   npx tsx scripts/bench/related-words.ts [dataset dir]
import fs from "node:fs";
import path from "node:path";
import { loadRelatedWords, withRelatedWords } from "@/lib/memory/related-words";
import { queryTerms, searchableQuestion } from "@/lib/memory/long-term";

const dir = process.argv[2] ?? "../shared/datasets/locomo/dev";
const questions = fs
  .readdirSync(dir)
  .flatMap((f) => (JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")).qa ?? []) as { question: string }[])
  .map((q) => q.question);
let t = performance.now();
loadRelatedWords();
const loadMs = performance.now() - t;
const ms = questions.map((q) => {
  const text = searchableQuestion(q);
  t = performance.now();
  withRelatedWords(queryTerms(text), text);
  return performance.now() - t;
});
const sorted = [...ms].sort((a, b) => a - b);
const at = (p: number) => Number(sorted[Math.floor((sorted.length - 1) * p)].toFixed(3));
console.log(
  JSON.stringify({
    questions: ms.length,
    load_ms: Number(loadMs.toFixed(1)),
    p50_ms: at(0.5),
    p95_ms: at(0.95),
    max_ms: at(1),
  }),
);
