// `npm run eval:locomo -- --base-url URL --model M --judge-model J [options] [LoCoMo files or folders]`
// Runs the LoCoMo question-answering protocol through Mnemo (scripts/eval/locomo-eval.ts) and prints J, tokens per
// answer and latency, then one JSON line. Options: --api-key (default $OPENAI_API_KEY), --embedding-model,
// --budget (memory tokens per answer, default 2000), --speakers first (learn about the first speaker only: half the
// extraction calls; default both, each as the user of a Mnemo of their own, as mem0's protocol), --conversations N, --questions N (per conversation),
// --judge-prompt FILE (the judge's instructions, with {question} {gold_answer} {generated_answer}), --out FILE
// (every answer and label as JSON), --concurrency N (conversations at once, default 1). Each conversation gets a
// fresh embedded database; nothing is kept. Every answer is also appended to a progress file (--out's name +
// ".progress.jsonl", else eval-locomo.progress.jsonl) as it is judged: after a crash or Ctrl-C, `--resume` takes the
// conversations answered in full from it and runs only the rest. Rate limits and server errors are retried.
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
const SWITCHES = new Set(["--resume"]);
const files = args.filter(
  (a, i) => !a.startsWith("--") && !(args[i - 1]?.startsWith("--") && !SWITCHES.has(args[i - 1])),
);
const baseURL = flag("base-url");
const model = flag("model");
const judgeModel = flag("judge-model") ?? model;
if (!baseURL || !model) {
  console.error("eval:locomo: --base-url and --model are required (and --judge-model, else the model judges itself).");
  process.exit(2);
}

const { runLocomoEval } = await import("./locomo-eval");
type JudgedAnswer = import("./locomo-eval").JudgedAnswer;
const progressFile = `${flag("out") ?? "eval-locomo"}.progress.jsonl`;
/** The earlier run's answers, the last one of each question kept (a conversation cut off was run again). */
const done = new Map<string, JudgedAnswer>();
if (args.includes("--resume") && fs.existsSync(progressFile))
  for (const line of fs.readFileSync(progressFile, "utf8").split("\n").filter(Boolean)) {
    try {
      const a = JSON.parse(line) as JudgedAnswer;
      done.set(`${a.conversation}\u0000${a.index}`, a);
    } catch {
      // A line cut off by the crash: that question is answered again.
    }
  }
else fs.writeFileSync(progressFile, "");
if (done.size) console.log(`Resuming: ${done.size} answers from ${progressFile}`);
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
  speakers: flag("speakers") === "first" ? "first" : "both",
  maxConversations: Number(flag("conversations") ?? 0),
  maxQuestions: Number(flag("questions") ?? 0),
  judgePrompt: judgePromptFile ? fs.readFileSync(judgePromptFile, "utf8") : undefined,
  concurrency: Number(flag("concurrency") ?? 1),
  done: [...done.values()],
  onAnswer: (a) => fs.appendFileSync(progressFile, JSON.stringify(a) + "\n"),
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
