// `npm run bench:attribution -- <file.jsonl>`: attribution precision and recall on what bench:recall sent, read
// again without recalling anything. bench:recall writes the file with ATTRIBUTION_MISSES=<file.jsonl>: one line per
// question (at 2,000 tokens, with memories) holding the question, the gold answer and every memory sent, marked
// `used` when its evidence turns include one of the question's. A change to lib/memory/attribution.ts is measured
// here in seconds; bench:recall stays the number of record, since recall decides what is sent.
import fs from "node:fs";
import { attributeMemories, type SentMemory } from "@/lib/memory/attribution";

type Line = { q: string; a: unknown; sent?: Array<SentMemory & { used: boolean; since?: string }> };

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

let hit = 0;
let credited = 0;
let used = 0;
let ms = 0;
const misses: string[] = [];
for (const l of lines) {
  const sent = l.sent!.map((m) => ({ id: m.id, text: m.text, since: m.since ? new Date(m.since) : undefined }));
  const t0 = performance.now();
  const ids = new Set(attributeMemories(String(l.a ?? ""), l.q, sent));
  ms += performance.now() - t0;
  const truth = new Set(l.sent!.filter((m) => m.used).map((m) => m.id));
  hit += [...ids].filter((id) => truth.has(id)).length;
  credited += ids.size;
  used += truth.size;
  if (process.env.SHOW)
    for (const m of l.sent!) {
      const mark = ids.has(m.id) === m.used ? "" : m.used ? "MISSED" : "WRONG";
      if (mark) misses.push(`${mark}\t${l.q}\t${String(l.a)}\t${m.text}`);
    }
}
const precision = credited ? hit / credited : 0;
const recall = used ? hit / used : 0;
if (misses.length) fs.writeFileSync(process.env.SHOW!, misses.join("\n") + "\n");
console.log(
  JSON.stringify({
    questions: lines.length,
    precision: Number(precision.toFixed(3)),
    recall: Number(recall.toFixed(3)),
    credited,
    used,
    ms_per_answer: Number((ms / lines.length).toFixed(3)),
  }),
);
