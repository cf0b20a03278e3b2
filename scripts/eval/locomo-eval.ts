// The LoCoMo question-answering protocol, end to end through Mnemo's own
// pipeline, with any OpenAI-compatible model (`npm run eval:locomo`, below).
// For each conversation, on a fresh embedded database:
//  1. ingest, once for each speaker as the user of a Mnemo of their own (as the
//     mem0 evaluation keeps a memory store per speaker; Mnemo learns about its
//     user only): one thread per session, the turns as messages on the
//     session's date; then learning as the app does it: extraction on each
//     exchange (the user's turn and the answer after it), consolidation, and
//     embeddings when an embedding model is given;
//  2. answer each question of categories 1-4 (5, adversarial, is left out, as
//     in the published protocol) from Mnemo's recall at a stated token budget,
//     shared by the speakers' memory blocks (the first speaker's with the
//     conversation's passages): the blocks go to the model with the question;
//  3. judge each answer with an LLM against the gold answer: CORRECT or WRONG,
//     generous on wording and on date formats, as in the mem0 evaluation.
// Reported: J (the share judged CORRECT, overall and per category), tokens per
// answer (the memory block, and the whole prompt as the model counted it), and
// latency (recall, and recall + answer: p50 / p95).
import type { Db } from "@/lib/db/types";
import { createTestDb } from "@/testing/databases";
import { userContext, type UserContext } from "@/lib/user-context";
import { appendItems } from "@/lib/memory/session";
import { saveConnection, clearConnectionCache, resolveConnection, type ModelConnection } from "@/lib/llm/connection";
import { openaiClient } from "@/lib/llm/client";
import { extractMemories } from "@/lib/memory/extract";
import { consolidateUser } from "@/lib/memory/consolidate";
import { embedPending } from "@/lib/memory/embed";
import { embedQuery } from "@/lib/llm/embeddings";
import { memoryBlock, recall } from "@/lib/memory/recall";
import { countTokens } from "@/lib/memory/tokens";
import { percentile, round } from "../bench/stats";
import { withRetries, type RetryOptions } from "./retry";
import { withoutReasoning } from "@/lib/llm/model-reply";
import { withoutRefused } from "@/lib/llm/server-quirks";
import {
  locomoConversations,
  locomoMessages,
  locomoSessions,
  locomoSpeakers,
  parseLocomoDate,
  type LocomoConversation,
} from "../bench/locomo-data";

export type EvalOptions = {
  files: string[];
  baseURL: string;
  apiKey?: string;
  model: string;
  judgeModel: string;
  embeddingModel?: string;
  /**
   * Whose memories are learned: each speaker's, as the user of a Mnemo of their own (the default, as in mem0's
   * protocol), or the first speaker's only (half the extraction calls; the second speaker then reaches the answer
   * only through the conversation's passages).
   */
  speakers?: "both" | "first";
  /** Tokens of memory per answer (MNEMO_MEMORY_TOKEN_BUDGET for this run). */
  budget: number;
  /** At most this many conversations / questions per conversation (0: all). */
  maxConversations?: number;
  maxQuestions?: number;
  /** The judge's instructions, with {question}, {gold_answer} and {generated_answer}; JUDGE_PROMPT by default. */
  judgePrompt?: string;
  log?: (line: string) => void;
  /** Conversations run at once, each on its own database (default 1). Their model calls overlap. */
  concurrency?: number;
  /** Transient model failures (rate limits, 5xx, timeouts) are retried with backoff (scripts/eval/retry.ts). */
  retry?: Omit<RetryOptions, "log">;
  /** Answers of an earlier run (--resume): a conversation all of whose questions are here is not run again. */
  done?: JudgedAnswer[];
  /** Each answer as it is judged (the CLI appends it to a progress file). */
  onAnswer?: (a: JudgedAnswer) => void;
};

export type JudgedAnswer = {
  conversation: string;
  /** The question's place among the conversation's questions of categories 1-4. */
  index: number;
  /**
   * Active memories its conversation had after learning, both speakers' (kept with each answer so a resumed run
   * reports them).
   */
  memories: number;
  question: string;
  category: number;
  gold: string;
  answer: string;
  correct: boolean;
  memoryTokens: number;
  promptTokens: number | null;
  recallMs: number;
  answerMs: number;
};

export type EvalReport = {
  J: number;
  byCategory: Record<string, { J: number; n: number }>;
  questions: number;
  memories: number;
  memoryTokensMean: number;
  promptTokensMean: number | null;
  recallMs: { p50: number | null; p95: number | null };
  answerMs: { p50: number | null; p95: number | null };
  answers: JudgedAnswer[];
};

/** The answering instructions: the memory blocks are the only source (no conversation is in the prompt). */
export const ANSWER_SYSTEM = [
  "You answer questions about two people's past conversations from what Mnemo remembers of them. Each memory",
  'block says whose side of the conversations it was learned from; in it, "the user" is that person.',
  "Use only the information in the memory blocks. Turn relative dates into dates, using the dates shown",
  "with the passages; when facts disagree, prefer the most recent. Answer in a few words; if the memory",
  "does not say, answer that it does not say.",
].join(" ");

/**
 * The judge's instructions, following the protocol of the mem0 evaluation (metrics/llm_judge.py): generous on
 * wording and length, the same date or period in any format counts, one label in JSON. For figures strictly
 * comparable with published ones, pass that file's ACCURACY_PROMPT with --judge-prompt.
 */
export const JUDGE_PROMPT = `Label a generated answer to a question as CORRECT or WRONG.
You get (1) a question one person asked about another person's past conversations, (2) the gold answer, which is
short and names what the question is about, and (3) a generated answer.
Be generous: a generated answer that is longer, or worded differently, is CORRECT as long as it is about the same
thing as the gold answer. For a question about time, it is CORRECT when it refers to the same date or period, in
any format or as a relative reference that resolves to it.

Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}

Reply with JSON only: {"label": "CORRECT"} or {"label": "WRONG"}.`;

/** Runs the protocol; prints progress through `log`. */
export async function runLocomoEval(o: EvalOptions): Promise<EvalReport> {
  const log = o.log ?? (() => undefined);
  const judge = openaiClient({ baseURL: o.baseURL, apiKey: o.apiKey, chatModel: o.judgeModel, memoryModel: "" });
  let convs = o.files.flatMap((f) => locomoConversations(f).map((c, i) => ({ name: `${f}#${i}`, conv: c })));
  if (o.maxConversations) convs = convs.slice(0, o.maxConversations);
  const results: Array<{ answers: JudgedAnswer[]; memories: number }> = [];
  const queue = convs.map((c, i) => ({ ...c, i }));
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const qa = questionsOf(next.conv, o.maxQuestions);
      const before = (o.done ?? []).filter((a) => a.conversation === next.name);
      if (before.length === qa.length && qa.every((_, i) => before.some((a) => a.index === i))) {
        log(`${next.name}: all ${qa.length} answers from the earlier run`);
        results[next.i] = { answers: before.sort((a, b) => a.index - b.index), memories: before[0]?.memories ?? 0 };
        continue;
      }
      results[next.i] = await runConversation(o, judge, next.name, next.conv, qa, (l) => log(`${next.name}: ${l}`));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 1) }, worker));
  return report(
    results.flatMap((r) => r.answers),
    results.reduce((n, r) => n + r.memories, 0),
  );
}

const questionsOf = (conv: LocomoConversation, max?: number) => {
  const qa = conv.qa.filter((q) => Number(q.category) !== 5);
  return max ? qa.slice(0, max) : qa;
};

/** One conversation on a fresh database: ingest, then answer and judge each question. */
async function runConversation(
  o: EvalOptions,
  judge: ReturnType<typeof openaiClient>,
  name: string,
  conv: LocomoConversation,
  qa: LocomoConversation["qa"],
  log: (line: string) => void,
) {
  const retry = <T>(what: string, fn: () => Promise<T>) => withRetries(what, fn, { ...o.retry, log });
  const answers: JudgedAnswer[] = [];
  const t = await createTestDb("pglite");
  try {
    const conn = await connect(t.db, o);
    const speakers = locomoSpeakers(conv).slice(0, o.speakers === "first" ? 1 : 2);
    const sides: Side[] = [];
    for (const speaker of speakers) {
      const u = await userFor(t.db, `${name}-${speaker}`);
      await ingest(u, conn, conv, speaker, (l) => log(`${speaker}'s side: ${l}`), retry);
      sides.push({ speaker, u });
    }
    const memories = await t.db.memory.count({
      where: { userId: { in: sides.map((s) => s.u.userId) }, status: "active" },
    });
    for (const [index, q] of qa.entries()) {
      const a = await retry("answer", () => answerOne(sides, conn, q.question, o.budget));
      const gold = String(q.answer ?? "");
      const correct = await retry("judge", () => judged(judge, o, q.question, gold, a.answer));
      const done = {
        conversation: name,
        index,
        memories,
        question: q.question,
        category: Number(q.category),
        gold,
        correct,
        ...a,
      };
      answers.push(done);
      o.onAnswer?.(done);
      log(`${correct ? "CORRECT" : "WRONG  "} [${q.category}] ${q.question} → ${a.answer.slice(0, 80)}`);
    }
    return { answers, memories };
  } finally {
    await t.close();
  }
}

/** One speaker as the user of their own Mnemo (a user of the conversation's database). */
type Side = { speaker: string; u: UserContext };

/** The model connection saved in the database, as an admin would. */
async function connect(db: Db, o: EvalOptions): Promise<ModelConnection> {
  const admin = await db.user.create({ data: { email: "eval-admin@locomo.test", role: "ADMIN" } });
  await saveConnection(
    db,
    {
      baseURL: o.baseURL,
      apiKey: o.apiKey,
      chatModel: o.model,
      memoryModel: o.model,
      embeddingModel: o.embeddingModel ?? "",
    },
    admin.id,
  );
  clearConnectionCache(db);
  const state = await resolveConnection(db);
  if (!state.configured) throw new Error(`The model connection is not usable: ${state.reason}`);
  return state.connection;
}

async function userFor(db: Db, name: string): Promise<UserContext> {
  const user = await db.user.create({ data: { email: `eval-${name.replace(/\W+/g, "-")}@locomo.test` } });
  return userContext(db, user.id);
}

/**
 * Step 1, for one speaker as the user: messages, then learning from each exchange, consolidation and embeddings,
 * as the app does.
 */
async function ingest(
  u: UserContext,
  conn: ModelConnection,
  conv: LocomoConversation,
  speaker: string,
  log: (l: string) => void,
  retry: <T>(what: string, fn: () => Promise<T>) => Promise<T>,
) {
  const { db } = u;
  for (const n of locomoSessions(conv)) {
    const date = parseLocomoDate(conv[`session_${n}_date_time`] as string);
    const thread = await db.thread.create({
      data: { userId: u.userId, title: `Session ${n}`, createdAt: date, lastActivityAt: date },
    });
    const items = await appendItems(db, thread.id, locomoMessages(conv, n, speaker), { cipher: u.cipher });
    await db.item.updateMany({ where: { threadId: thread.id }, data: { createdAt: date } });
    let learned = 0;
    for (let i = 0; i < items.length; i++) {
      if (items[i].role !== "user") continue;
      const next = items[i + 1]?.role === "assistant" ? items[i + 1] : null;

      // A failed call changed nothing (the decisions come after it), so it is simply made again.
      const r = await retry("extraction", () =>
        extractMemories(u, conn, {
          threadId: thread.id,
          userItemId: items[i].id,
          question: items[i].content,
          answer: next?.content ?? "",
          at: date, // the session's date: relative dates in it count from then
          review: false,
        }),
      );
      learned += r.applied.length;
    }
    log(`session ${n}: ${items.length} messages, ${learned} memory changes`);
  }
  await retry("consolidation", () => consolidateUser(u, conn));
  if (conn.embeddingModel) await retry("embeddings", () => embedPending(db, { userId: u.userId }));
}

/**
 * Step 2: recall at the budget, then the model's answer from the memory blocks alone. The second speaker's
 * memories (no passages: the chats are the same) take at most half the budget; the first speaker's recall, with
 * the conversation's passages, takes the rest, so that all the blocks with their headings stay within it.
 */
async function answerOne(sides: Side[], conn: ModelConnection, question: string, budget: number) {
  const t0 = performance.now();
  const semantic = (u: UserContext) => embedQuery(u.db, question, u.userId);
  const heading = (speaker: string) => (sides.length > 1 ? `Learned from ${speaker}'s side:\n` : "");
  const parts: string[] = [];
  let left = budget - countTokens(heading(sides[0].speaker));
  for (const { speaker, u } of sides.slice(1)) {
    const r = await recall(u, question, { budget: Math.floor(budget / 2), passages: false, semantic: semantic(u) });
    const part = `${heading(speaker)}${memoryBlock(r) ?? NOTHING}`;
    left -= countTokens(part);
    parts.push(part);
  }
  const [first] = sides;
  const r = await recall(first.u, question, { budget: Math.max(0, left), semantic: semantic(first.u) });
  const block = [`${heading(first.speaker)}${memoryBlock(r) ?? NOTHING}`, ...parts].join("\n\n");
  const recallMs = performance.now() - t0;
  // A reasoning model refuses temperature 0: asked again at its default (lib/llm/server-quirks.ts).
  const res = await withoutRefused(conn, conn.chatModel, ["temperature"], (use) =>
    openaiClient(conn).chat.completions.create({
      model: conn.chatModel,
      ...(use.has("temperature") ? { temperature: 0 } : {}),
      messages: [
        { role: "system", content: `${ANSWER_SYSTEM}\n\n${block}` },
        { role: "user", content: `Answer the question: ${question}` },
      ],
    }),
  );
  return {
    answer: withoutReasoning(res.choices[0]?.message?.content ?? ""),
    memoryTokens: countTokens(block),
    promptTokens: res.usage?.prompt_tokens ?? null,
    recallMs,
    answerMs: performance.now() - t0,
  };
}

const NOTHING = "(Mnemo remembers nothing relevant.)";

/** Step 3: the judge's label (anything but a CORRECT label counts as WRONG). */
async function judged(judge: ReturnType<typeof openaiClient>, o: EvalOptions, q: string, gold: string, answer: string) {
  const prompt = (o.judgePrompt ?? JUDGE_PROMPT)
    .replaceAll("{question}", q)
    .replaceAll("{gold_answer}", gold)
    .replaceAll("{generated_answer}", answer);
  // A server without JSON mode (LM Studio), or a reasoning model refusing temperature 0, is asked again without.
  const res = await withoutRefused({ baseURL: judge.baseURL }, o.judgeModel, ["jsonMode", "temperature"], (use) =>
    judge.chat.completions.create({
      model: o.judgeModel,
      ...(use.has("temperature") ? { temperature: 0 } : {}),
      ...(use.has("jsonMode") ? { response_format: { type: "json_object" as const } } : {}),
      messages: [{ role: "user", content: prompt }],
    }),
  );
  return judgedCorrect(res.choices[0]?.message?.content ?? "");
}

/**
 * The judge's verdict from its reply: its last label, since a judge that reasons aloud or first repeats the two
 * choices ends on its own; a bare CORRECT or WRONG (in capitals) when it wrote no label. Anything else is WRONG.
 */
export function judgedCorrect(reply: string): boolean {
  const text = withoutReasoning(reply);
  const labels = [...text.matchAll(/["']label["']\s*:\s*["'](correct|wrong)["']/gi)];
  const bare = [...text.matchAll(/\b(CORRECT|WRONG)\b/g)];
  const last = labels.at(-1) ?? bare.at(-1);
  return last?.[1].toUpperCase() === "CORRECT";
}

function report(answers: JudgedAnswer[], memories: number): EvalReport {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const share = (xs: JudgedAnswer[]) => round(mean(xs.map((a) => (a.correct ? 1 : 0))), 3) ?? 0;
  const byCategory: EvalReport["byCategory"] = {};
  for (const c of [...new Set(answers.map((a) => a.category))].sort()) {
    const of = answers.filter((a) => a.category === c);
    byCategory[c] = { J: share(of), n: of.length };
  }
  const prompt = answers.map((a) => a.promptTokens).filter((n): n is number => n !== null);
  const ms = (xs: number[]) => ({ p50: round(percentile(xs, 50), 1), p95: round(percentile(xs, 95), 1) });
  return {
    J: share(answers),
    byCategory,
    questions: answers.length,
    memories,
    memoryTokensMean: round(mean(answers.map((a) => a.memoryTokens)), 0) ?? 0,
    promptTokensMean: prompt.length ? round(mean(prompt), 0) : null,
    recallMs: ms(answers.map((a) => a.recallMs)),
    answerMs: ms(answers.map((a) => a.answerMs)),
    answers,
  };
}
