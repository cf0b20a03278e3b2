// `npm run bench:recall -- <LoCoMo .json files or a folder>`: recall of the
// same retrieval the chat uses (lib/memory/recall.ts), on real long-term
// conversations. Each conversation becomes one user's history (one thread per
// session, turn ids such as D3:5 kept on the messages); in the "with memories"
// mode each session's annotated observations are also imported as memories
// carrying their evidence turn ids (a stand-in for perfect extraction). For
// every question of categories 1-4 we ask what would be injected in a new
// thread, at several budgets, and check which evidence turns it covers.
//
// Attribution ("Memories used", lib/memory/attribution.ts) is measured beside it, at 2,000 tokens with memories:
// the gold answer stands in for the model's answer (a terse one), and a memory sent with the question counts as
// truly used when its evidence turns include one of the question's. Precision and recall of the memories the
// answer is credited with, against crediting every memory sent (what "used" meant before attribution).
//
// Lexical recall always runs. Hybrid recall (words + vectors, ":hybrid" rows) runs beside it with what the app
// would use: an embedding endpoint when one is configured for the bench (BENCH_EMBEDDING_MODEL with
// BENCH_EMBEDDING_BASE_URL, and BENCH_EMBEDDING_API_KEY if it needs one: Ollama's nomic-embed-text, OpenAI's
// text-embedding-3-small), else the built-in encoder (lib/llm/builtin-embedder.ts; off with
// MNEMO_BUILTIN_EMBEDDINGS=off or `--lexical`). `--mock-embeddings` uses the project's test server instead
// (hashed words, no meaning: it checks the mechanics and cost, not recall by meaning).
//
// One embedded database for the whole run, one user per conversation (recall reads only its user's rows): creating
// and closing a PGlite instance per conversation trips a V8 bug on Node 24 after a few dozen (nodejs/node#64500,
// "Check failed: jit_page_->allocations_.erase(addr) == 1"). `--repeat=N` ingests the files N times (as other
// users), to check a run of many LoCoMo-sized conversations in one process. `DATABASE_URL=… BENCH_ENGINES=postgres`
// measures on PostgreSQL instead (with pgvector, its approximate HNSW index ranks the messages).
import fs from "node:fs";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import os from "node:os";
import path from "node:path";

process.env.MNEMO_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-recall-"));
// The engine measured: PGlite, or PostgreSQL with DATABASE_URL and BENCH_ENGINES=postgres (pgvector's index then).
const { benchEngines } = await import("./env");
const [engine] = benchEngines();

const { createTestDb } = await import("../../testing/databases");
const { appendItems } = await import("../../lib/memory/session");
const { recall, escapeLine } = await import("../../lib/memory/recall");
const { countTokens } = await import("../../lib/memory/tokens");
const { readTogether } = await import("../../lib/db/function-calls");
const { UPKEEP_SQL } = await import("../../lib/db/statistics");
const { percentile, round, table } = await import("./stats");
const { locomoConversations, locomoFiles, locomoMessages, locomoSessions, parseLocomoDate } =
  await import("./locomo-data");
const { saveConnection, clearConnectionCache } = await import("../../lib/llm/connection");
const { embedQuery } = await import("../../lib/llm/embeddings");
const { embedPending } = await import("../../lib/memory/embed");
const { ensureVectorIndex } = await import("../../lib/memory/vectors");
const { startMockLlm } = await import("../../testing/mock-llm");
const { attributeMemories } = await import("../../lib/memory/attribution");
const { getConfig } = await import("../../lib/config");
const { BUILTIN_EMBEDDING_MODEL } = await import("../../lib/llm/builtin-embedder");

type EmbeddingSetup =
  { baseURL: string; model: string; apiKey?: string; label: string } | { builtin: true; label: string };
async function embeddingSetup(args: string[]): Promise<EmbeddingSetup | null> {
  if (args.includes("--lexical")) return null;
  if (args.includes("--mock-embeddings")) {
    const mock = await startMockLlm();
    return { baseURL: mock.url, model: "mock-embed-256", label: "project test server (hashed words, 256 dims)" };
  }
  const model = process.env.BENCH_EMBEDDING_MODEL;
  const baseURL = process.env.BENCH_EMBEDDING_BASE_URL;
  if (model && baseURL)
    return { baseURL, model, apiKey: process.env.BENCH_EMBEDDING_API_KEY, label: `${model} at ${baseURL}` };
  // What the app uses with no embedding endpoint set (lib/llm/builtin-embedder.ts).
  if (!getConfig().builtinEmbeddings) return null;
  return { builtin: true, label: `the built-in encoder (${BUILTIN_EMBEDDING_MODEL})` };
}

// BENCH_BUDGETS=2000 for a quick run (the summary line reads the 2,000-token figures).
const BUDGETS = (process.env.BENCH_BUDGETS ?? "500,1000,2000,4000").split(",").map(Number);
const evidenceIds = (e: unknown): string[] =>
  (Array.isArray(e) ? e : [e])
    .flatMap((x) => String(x ?? "").split(/[;,\s]+/))
    .map((x) => x.trim())
    .filter((x) => /^D\d+:\d+$/.test(x));

type Row = { mode: string; budget: number | string; any: number[]; all: number[]; tokens: number[]; ms: number[] };

async function main() {
  const args = process.argv.slice(2);
  const inputs = locomoFiles(args.filter((a) => !a.startsWith("--")));
  const emb = await embeddingSetup(args);
  const rows = new Map<string, Row>();
  const row = (mode: string, budget: number | string) => {
    const k = `${mode}|${budget}`;
    if (!rows.has(k)) rows.set(k, { mode, budget, any: [], all: [], tokens: [], ms: [] });
    return rows.get(k)!;
  };
  let questions = 0;
  // Each conversation alone: hybrid must not lose to its own word half on any one of them (#55), not only pooled.
  const perConversation = new Map<string, { any: [number, number]; all: [number, number]; n: number }>();
  const countConversation = (key: string, variant: string, any: number, all: number) => {
    const c = perConversation.get(key) ?? { any: [0, 0], all: [0, 0], n: 0 };
    const i = variant ? 1 : 0;
    c.any[i] += any;
    c.all[i] += all;
    if (!variant) c.n++;
    perConversation.set(key, c);
  };
  // How long a turn waits for the question's vector (it runs beside the word search, so it adds only past it).
  const questionVectorMs: number[] = [];
  // Attribution at 2,000 tokens with memories: [credited and truly used, credited, truly used], summed.
  const credit = { attributed: [0, 0, 0], everySent: [0, 0, 0] };
  const tally = (into: number[], credited: Set<string>, used: Set<string>) => {
    into[0] += [...credited].filter((id) => used.has(id)).length;
    into[1] += credited.size;
    into[2] += used.size;
  };

  const repeat = Math.max(1, Number(args.find((a) => a.startsWith("--repeat="))?.slice("--repeat=".length) ?? 1));
  const t = await createTestDb(engine);
  let people = 0;
  if (emb && !("builtin" in emb)) {
    const admin = await t.db.user.create({ data: { email: "bench-admin@locomo.test", role: "ADMIN" } });
    const conn = { baseURL: emb.baseURL, chatModel: "unused", memoryModel: "", embeddingModel: emb.model };
    await saveConnection(t.db, { ...conn, apiKey: emb.apiKey }, admin.id);
    clearConnectionCache(t.db);
  }
  // BENCH_MODES=with_memories for one mode (the summary line then reads only its figures).
  const modes = (process.env.BENCH_MODES ?? "messages_only,with_memories").split(",") as Array<
    "messages_only" | "with_memories"
  >;
  for (const mode of modes) {
    for (const file of Array.from({ length: repeat }, () => inputs).flat()) {
      for (const conv of locomoConversations(file)) {
        const user = await t.db.user.create({
          data: { email: `${people++}-${path.basename(file)}-${mode}@locomo.test` },
        });
        const sessions = locomoSessions(conv);
        const allTurns: Array<{ id: string; text: string; tokens: number; date: Date }> = [];
        for (const n of sessions) {
          const date = parseLocomoDate(conv[`session_${n}_date_time`] as string);
          const thread = await t.db.thread.create({
            data: { userId: user.id, title: `Session ${n}`, createdAt: date, lastActivityAt: date },
          });
          const items = locomoMessages(conv, n);
          await appendItems(t.db, thread.id, items, { cipher: await threadCipher(t.db, thread.id) });
          // The messages were written on the session's date (recall favours dates a question names).
          await t.db.item.updateMany({ where: { threadId: thread.id }, data: { createdAt: date } });
          for (const it of items)
            allTurns.push({ id: it.sourceRef, text: it.content, tokens: countTokens(it.content) + 4, date });
          if (mode === "with_memories") {
            const obs = conv[`session_${n}_observation`] as Record<string, Array<[string, unknown]>> | undefined;
            for (const list of Object.values(obs ?? {})) {
              for (const [text, ev] of list) {
                await t.db.memory.create({
                  data: {
                    userId: user.id,
                    text: text.slice(0, 500),
                    source: "inferred",
                    kind: "fact",
                    sourceRef: evidenceIds(ev).join(","),
                    tokens: countTokens(text),
                    createdAt: date,
                    updatedAt: date,
                  },
                });
              }
            }
          }
        }
        const turnText = new Map(allTurns.map((x) => [x.id, x.text]));
        const fullTokens = allTurns.reduce((s, x) => s + x.tokens, 0);
        // Planner statistics, as the app's schedule (lib/db/statistics.ts) would have gathered by then.
        if (!process.env.BENCH_NO_ANALYZE) for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
        if (emb && "builtin" in emb) {
          const done = await embedPending(t.db, { userId: user.id });
          if (done.model !== BUILTIN_EMBEDDING_MODEL || done.remaining)
            throw new Error("the built-in encoder did not run");
        } else if (emb) {
          const done = await embedPending(t.db, { userId: user.id });
          if (done.remaining || done.unembeddable)
            console.error(
              `warning: ${done.remaining} rows left, ${done.unembeddable} refused by the embedding endpoint`,
            );
        }
        if (engine === "postgres" && emb) {
          // The index built and the vectors in the planner's statistics, as a server that has run a while has them.
          await ensureVectorIndex(t.db, (await embedQuery(t.db, "index"))!.vector.length);
          await t.db.$executeRaw`ANALYZE "Item"`;
        }
        for (const qa of conv.qa.filter((q) => [1, 2, 3, 4].includes(q.category))) {
          const ev = evidenceIds(qa.evidence);
          if (!ev.length) continue;
          if (mode === modes[0]) questions++;
          // The question's vector once per question (the chat embeds it once per turn, in parallel with the word
          // search).
          const e0 = performance.now();
          const sem = emb ? await embedQuery(t.db, qa.question) : null;
          if (emb) questionVectorMs.push(performance.now() - e0);
          if (emb && !sem) throw new Error("the embedding endpoint did not answer");
          for (const budget of BUDGETS) {
            for (const variant of emb ? (["", ":hybrid"] as const) : ([""] as const)) {
              const t0 = performance.now();
              const u = await userContext(t.db, user.id);
              // As a turn reads (lib/chat/turn.ts): the calls made together share a statement, unless BENCH_UNBATCHED.
              const read = () =>
                recall(u, qa.question, { budget, semantic: variant ? Promise.resolve(sem) : undefined });
              const r = await (process.env.BENCH_UNBATCHED ? read() : readTogether(read));
              const ms = performance.now() - t0;
              // A turn counts when its message is shown whole: an excerpt of it (a long message, or a line cut to
              // its cap) may have left the evidence out.
              const covered = new Set<string>([
                ...r.passages.flatMap((p) =>
                  p.sourceRefs.filter((ref, i) => p.lines[i]?.endsWith(escapeLine(turnText.get(ref) ?? "\u0000"))),
                ),
                ...r.memories.flatMap((m) => (m.sourceRef ?? "").split(",")),
              ]);
              if (
                process.env.MISSES &&
                budget === Number(process.env.MISSES_BUDGET ?? 2000) &&
                (process.env.MISSES_ALL || !ev.every((e) => covered.has(e)))
              )
                fs.appendFileSync(
                  process.env.MISSES,
                  JSON.stringify({
                    mode: mode + variant,
                    file: path.basename(file),
                    q: qa.question,
                    cat: qa.category,
                    ev,
                    found: ev.every((e) => covered.has(e)),
                    // The evidence shown whole; one in `pass` but not here was cut to an excerpt.
                    covered: ev.filter((e) => covered.has(e)),
                    mems: r.memories.length,
                    memRefs: r.memories.map((m) => m.sourceRef),
                    memTexts: process.env.MISSES_TEXT ? r.memories.map((m) => m.text) : undefined,
                    passLines: process.env.MISSES_TEXT ? r.passages.map((p) => p.lines) : undefined,
                    pass: r.passages.map((p) => `${p.recent ? "R" : ""}${p.sourceRefs.join(",")}`),
                    tokens: r.tokens,
                  }) + "\n",
                );
              if (mode === "with_memories" && budget === 2000 && !variant) {
                const used = new Set(
                  r.memories.filter((m) => (m.sourceRef ?? "").split(",").some((e) => ev.includes(e))).map((m) => m.id),
                );
                const sent = r.memories.map((m) => ({ id: m.id, text: m.text, since: m.since }));
                const credited = new Set(attributeMemories(String(qa.answer ?? ""), qa.question, sent));
                tally(credit.attributed, credited, used);
                if (process.env.ATTRIBUTION_MISSES)
                  fs.appendFileSync(
                    process.env.ATTRIBUTION_MISSES,
                    JSON.stringify({
                      q: qa.question,
                      a: qa.answer,
                      cat: qa.category,
                      missed: sent.filter((m) => used.has(m.id) && !credited.has(m.id)).map((m) => m.text),
                      wrong: sent.filter((m) => !used.has(m.id) && credited.has(m.id)).map((m) => m.text),
                      right: sent.filter((m) => used.has(m.id) && credited.has(m.id)).map((m) => m.text),
                      // Everything sent, for trying a change to attribution offline (scripts/bench/attribution.ts).
                      sent: sent.map((m) => ({ ...m, used: used.has(m.id) })),
                    }) + "\n",
                  );
                tally(credit.everySent, new Set(sent.map((m) => m.id)), used);
              }
              const rw = row(mode + variant, budget);
              rw.any.push(ev.some((e) => covered.has(e)) ? 1 : 0);
              rw.all.push(ev.every((e) => covered.has(e)) ? 1 : 0);
              if (emb) countConversation(`${user.email}|${budget}`, variant, rw.any.at(-1)!, rw.all.at(-1)!);
              rw.tokens.push(r.tokens);
              rw.ms.push(ms);
            }
            // Baseline: the newest turns that fit the budget.
            const recent = new Set<string>();
            let used = 0;
            for (let i = allTurns.length - 1; i >= 0 && used + allTurns[i].tokens <= budget; i--) {
              used += allTurns[i].tokens;
              recent.add(allTurns[i].id);
            }
            const rr = row(`${mode}:recent`, budget);
            rr.any.push(ev.some((e) => recent.has(e)) ? 1 : 0);
            rr.all.push(ev.every((e) => recent.has(e)) ? 1 : 0);
            rr.tokens.push(used);
            rr.ms.push(0);
          }
          const fr = row(`${mode}:full_history`, "all");
          fr.any.push(1);
          fr.all.push(ev.every((e) => allTurns.some((x) => x.id === e)) ? 1 : 0);
          fr.tokens.push(fullTokens);
          fr.ms.push(0);
        }
      }
    }
  }
  await t.close();

  const mean = (a: number[]) => a.reduce((s, x) => s + x, 0) / Math.max(1, a.length);
  console.log(
    `Recall on ${inputs.length} LoCoMo file(s), ${questions} questions (categories 1-4), ${engine === "postgres" ? "PostgreSQL" : "PGlite"}, ${new Date().toISOString().slice(0, 10)}`,
  );
  console.log(
    emb
      ? `Hybrid rows (":hybrid"): vectors from ${emb.label}`
      : "Lexical only: no embedding endpoint configured for the bench (BENCH_EMBEDDING_MODEL / BENCH_EMBEDDING_BASE_URL)",
  );
  if (emb)
    console.log(
      `The question's vector: p50 ${round(percentile(questionVectorMs, 50))} ms, p95 ${round(percentile(questionVectorMs, 95))} ms`,
    );
  console.log(
    table(
      [...rows.values()].map((r) => ({
        mode: r.mode,
        budget: r.budget,
        recall_any: round(mean(r.any), 3),
        recall_all: round(mean(r.all), 3),
        mean_tokens: round(mean(r.tokens), 0),
        p50_ms: round(percentile(r.ms, 50)),
        p95_ms: round(percentile(r.ms, 95)),
      })),
    ),
  );
  if (emb) printPerConversation(perConversation);
  const scores = ([hit, credited, used]: number[]) => {
    const precision = credited ? hit / credited : 0;
    const recall = used ? hit / used : 0;
    return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
  };
  const attribution = scores(credit.attributed);
  const baseline = scores(credit.everySent);
  console.log("\nAttribution at 2,000 tokens with memories (the gold answer as the answer):");
  console.log(
    table(
      [
        { credited: "memories the answer carries (attribution)", ...attribution },
        { credited: "every memory sent", ...baseline },
      ].map((a) => ({ ...a, precision: round(a.precision, 3), recall: round(a.recall, 3), f1: round(a.f1, 3) })),
    ),
  );
  const get = (mode: string, budget: number | string) =>
    rows.get(`${mode}|${budget}`) ?? { any: [], all: [], tokens: [], ms: [] };
  const keys = (mode: "with_memories" | "messages_only", prefix: string) => ({
    [`${prefix}recall_any_at_2000`]: round(mean(get(mode, 2000).any), 3),
    [`${prefix}recall_all_at_2000`]: round(mean(get(mode, 2000).all), 3),
    [`${prefix}mean_tokens_at_2000`]: round(mean(get(mode, 2000).tokens), 0),
    [`${prefix}p95_ms_at_2000`]: round(percentile(get(mode, 2000).ms, 95)),
    [`${prefix}recent_recall_any_at_2000`]: round(mean(get(`${mode}:recent`, 2000).any), 3),
    [`${prefix}full_history_mean_tokens`]: round(mean(get(`${mode}:full_history`, "all").tokens), 0),
  });
  const hybrid = (mode: string, prefix: string) =>
    emb
      ? {
          [`${prefix}hybrid_recall_any_at_2000`]: round(mean(get(`${mode}:hybrid`, 2000).any), 3),
          [`${prefix}hybrid_recall_all_at_2000`]: round(mean(get(`${mode}:hybrid`, 2000).all), 3),
          [`${prefix}hybrid_p95_ms_at_2000`]: round(percentile(get(`${mode}:hybrid`, 2000).ms, 95)),
        }
      : {};
  console.log(
    JSON.stringify({
      questions,
      embeddings: emb?.label ?? null,
      question_vector_p95_ms: emb ? round(percentile(questionVectorMs, 95)) : null,
      ...keys("with_memories", ""),
      ...hybrid("with_memories", ""),
      attribution_precision_at_2000: round(attribution.precision, 3),
      attribution_recall_at_2000: round(attribution.recall, 3),
      every_sent_precision_at_2000: round(baseline.precision, 3),
      ...keys("messages_only", "messages_only_"),
      ...hybrid("messages_only", "messages_only_"),
    }),
  );
  process.exit(0);
}

/** Conversations where hybrid found fewer questions than words alone at some budget (any or all). */
function printPerConversation(counts: Map<string, { any: [number, number]; all: [number, number]; n: number }>) {
  const losses = [...counts]
    .filter(([, c]) => c.any[1] < c.any[0] || c.all[1] < c.all[0])
    .map(([key, c]) => {
      const [who, budget] = key.split("|");
      return {
        conversation: who.replace(/@locomo\.test$/, "").replace(/^\d+-/, ""),
        budget,
        questions: c.n,
        any_words_hybrid: `${c.any[0]} / ${c.any[1]}`,
        all_words_hybrid: `${c.all[0]} / ${c.all[1]}`,
      };
    });
  console.log(
    `\nConversations where hybrid found fewer questions than words alone: ${losses.length} of ${counts.size}` +
      " (conversation, mode, budget)",
  );
  if (losses.length) console.log(table(losses));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
