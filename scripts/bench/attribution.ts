// `npm run bench:attribution -- <file.jsonl>`: attribution precision and recall on what bench:recall sent, read
// again without recalling anything. bench:recall writes the file with ATTRIBUTION_MISSES=<file.jsonl>: one line per
// question (at 2,000 tokens, with memories) holding the question, the gold answer and every memory sent, marked
// `used` when its evidence turns include one of the question's. A change to lib/memory/attribution.ts is measured
// here in seconds; bench:recall stays the number of record, since recall decides what is sent.
import fs from "node:fs";
import { attributeMemories, type SentMemory } from "@/lib/memory/attribution";

type Line = { q: string; a: unknown; cat?: number; sent?: Array<SentMemory & { used: boolean; since?: string }> };

const file = process.argv[2];
if (!file) {
  console.error("usage: npm run bench:attribution -- <file.jsonl written by bench:recall with ATTRIBUTION_MISSES>");
  process.exit(2);
}
const lines = fs
  .readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Line);
if (!lines.every((l) => l.sent)) {
  console.error(`${file} has no "sent" lists: write it again with the current bench:recall`);
  process.exit(2);
}

// [credited and truly used, credited, truly used], in all and by LoCoMo category (1: the answer spans sessions).
const all = [0, 0, 0];
const byCategory = new Map<number, number[]>();
let ms = 0;
const misses: string[] = [];
for (const l of lines) {
  const sent = l.sent!.map((m) => ({ id: m.id, text: m.text, since: m.since ? new Date(m.since) : undefined }));
  const t0 = performance.now();
  const ids = new Set(attributeMemories(String(l.a ?? ""), l.q, sent));
  ms += performance.now() - t0;
  const truth = new Set(l.sent!.filter((m) => m.used).map((m) => m.id));
  const counts = [[...ids].filter((id) => truth.has(id)).length, ids.size, truth.size];
  if (l.cat !== undefined && !byCategory.has(l.cat)) byCategory.set(l.cat, [0, 0, 0]);
  for (const into of [all, byCategory.get(l.cat ?? -1)]) counts.forEach((n, i) => into && (into[i] += n));
  if (process.env.SHOW)
    for (const m of l.sent!) {
      const mark = ids.has(m.id) === m.used ? "" : m.used ? "MISSED" : "WRONG";
      if (mark) misses.push(`${mark}\t${l.q}\t${String(l.a)}\t${m.text}`);
    }
}
const scores = ([hit, credited, used]: number[]) => ({
  precision: Number((credited ? hit / credited : 0).toFixed(3)),
  recall: Number((used ? hit / used : 0).toFixed(3)),
  credited,
  used,
});
if (misses.length) fs.writeFileSync(process.env.SHOW!, misses.join("\n") + "\n");
if (byCategory.size) {
  const names: Record<number, string> = { 1: "multi-session", 2: "temporal", 3: "open-domain", 4: "single-session" };
  console.table(
    [...byCategory]
      .sort(([a], [b]) => a - b)
      .map(([cat, c]) => ({ category: `${cat} ${names[cat] ?? ""}`, ...scores(c) })),
  );
}
console.log(
  JSON.stringify({ questions: lines.length, ...scores(all), ms_per_answer: Number((ms / lines.length).toFixed(3)) }),
);
