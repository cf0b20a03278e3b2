// `npm run eval:locomo -- --base-url URL --model M --judge-model J [options] [LoCoMo files or folders]`
// Runs the LoCoMo question-answering protocol through Mnemo (scripts/eval/locomo-eval.ts) and prints J, tokens per
// answer and latency, then one JSON line. Options: --api-key (default $OPENAI_API_KEY), --embedding-model,
// --budget (memory tokens per answer, default 2000), --conversations N, --questions N (per conversation),
// --judge-prompt FILE (the judge's instructions, with {question} {gold_answer} {generated_answer}), --out FILE
// (every answer and label as JSON). Each conversation gets a fresh embedded database; nothing is kept.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

process.env.MNEMO_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-eval-"));
process.env.AUTH_SECRET ??= "eval-secret-eval-secret-eval-secret-0000";
delete process.env.DATABASE_URL;

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const files = args.filter((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
const baseURL = flag("base-url");
const model = flag("model");
const judgeModel = flag("judge-model") ?? model;
if (!baseURL || !model) {
  console.error("eval:locomo: --base-url and --model are required (and --judge-model, else the model judges itself).");
  process.exit(2);
}

const { runLocomoEval } = await import("./locomo-eval");
const { locomoFiles } = await import("../bench/locomo-data");
const { table } = await import("../bench/stats");
const judgePromptFile = flag("judge-prompt");
const report = await runLocomoEval({
  files: locomoFiles(files),
  baseURL,
  apiKey: flag("api-key") ?? process.env.OPENAI_API_KEY,
  model,
  judgeModel: judgeModel!,
  embeddingModel: flag("embedding-model"),
  budget: Number(flag("budget") ?? 2000),
  maxConversations: Number(flag("conversations") ?? 0),
  maxQuestions: Number(flag("questions") ?? 0),
  judgePrompt: judgePromptFile ? fs.readFileSync(judgePromptFile, "utf8") : undefined,
  log: (line) => console.log(line),
});
const out = flag("out");
if (out) fs.writeFileSync(out, JSON.stringify(report, null, 2));
console.log(
  "\n" + table(Object.entries(report.byCategory).map(([category, c]) => ({ category, questions: c.n, J: c.J }))),
);
console.log(
  `\nJ ${report.J} over ${report.questions} questions; ${report.memories} memories learned; memory block ` +
    `${report.memoryTokensMean} tokens, whole prompt ${report.promptTokensMean ?? "?"} tokens per answer (mean); ` +
    `recall p50/p95 ${report.recallMs.p50}/${report.recallMs.p95} ms, with the answer ${report.answerMs.p50}/${report.answerMs.p95} ms`,
);
const { answers: _answers, ...summary } = report;
console.log(JSON.stringify({ model, judgeModel, budget: Number(flag("budget") ?? 2000), ...summary }));
