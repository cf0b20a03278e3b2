// `npm run bench:context`: per-turn context assembly (load the window and the
// summary, build the prompt) for threads of 100, 1,000, 10,000 and 100,000
// messages (BENCH_SIZES=100,1000 to choose), on
// PGlite and (with DATABASE_URL) PostgreSQL; the database round trips a turn
// makes before calling the model; and the app's own time to the first streamed
// token with the test server answering instantly; and, as the machine's floor
// in the same run, one `SELECT 1` after each turn; and the assembly after a pause longer than the pool keeps
// idle connections (BENCH_PAUSES); and the 10,000-message thread again inside one of ten projects (BENCH_PROJECTS),
// in each memory mode; and the same thread with a long PDF (BENCH_DOCUMENT_PAGES): the turn with its passages, and
// the sidebar's search for a word of one page and for the commonest word; and the same thread in a shared project of
// five people (BENCH_SHARED_MEMBERS), written by one of them. `--timeline`: when each step of the first-token turns
// ends (lib/ops/turn-timeline.ts). Prints a table, then one JSON line.
import os from "node:os";
import { threadCipher } from "@/testing/ciphers";
import { inMemoryScope, userContext, type UserContext } from "@/lib/user-context";
import { GENERAL_SCOPE, projectScope, type MemoryScope } from "@/lib/projects/scope";
import { benchEngines } from "./env";

const { createTestDb } = await import("../../testing/databases");
const { startMockLlm } = await import("../../testing/mock-llm");
const { appendItems } = await import("../../lib/memory/session");
const { loadContext, buildPrompt } = await import("../../lib/chat/context");
const { recall, memoryBlock } = await import("../../lib/memory/recall");
const { getConfig } = await import("../../lib/config");
const { readTogether } = await import("../../lib/db/function-calls");
const { countTokens } = await import("../../lib/memory/tokens");
const { UPKEEP_SQL } = await import("../../lib/db/statistics");
const { runTurn } = await import("../../lib/chat/turn");
const { saveConnection, clearConnectionCache } = await import("../../lib/llm/connection");
const { percentile, round, table } = await import("./stats");
const { saveUpload } = await import("../../lib/attachments/store");
const { attachmentsForTurn, threadAttachmentRows } = await import("../../lib/attachments/prompt");
const { pdfOf } = await import("../../testing/pdf");
const { searchMessages } = await import("../../lib/chat/search");
const { indexDocument } = await import("../../lib/attachments/passage-index");
const { inviteMember } = await import("../../lib/projects/members");
const { createProject } = await import("../../lib/projects/projects");
const { shareExistingProject } = await import("../../lib/projects/share-existing");
const { projectAccess } = await import("../../lib/projects/access");
const { createThread } = await import("../../lib/chat/threads");
const { Prisma } = await import("../../lib/generated/prisma/client");
const { ensureVectorIndex } = await import("../../lib/memory/vectors");
const { BUILTIN_EMBEDDING_MODEL } = await import("../../lib/llm/builtin-embedder");
const { warmBuiltinEmbedder } = await import("../../lib/llm/embeddings");
const { TURN_STEPS, watchTurnSteps } = await import("../../lib/ops/turn-timeline");

const SIZES = (process.env.BENCH_SIZES ?? "100,1000,10000,100000").split(",").map(Number);
/** The thread the first-token timing uses: 10,000 messages, or the largest size measured. */
const TTFT_SIZE = SIZES.includes(10_000) ? 10_000 : Math.max(...SIZES);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 300);
/** Turns timed to the first token (the first two not counted): more make a steadier median on a noisy machine. */
const TTFT_TURNS = Number(process.env.BENCH_TTFT_TURNS ?? 60);
// Text with a realistic word distribution: a 5,000-word vocabulary drawn with
// Zipf-like frequencies (a few very common words, a long tail of rare ones).
const VOCAB = Array.from(
  { length: 5000 },
  (_, i) => i.toString(36).replace(/\d/g, (d) => "qxzjvwkyfb"[Number(d)]) + "o",
);
let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const zipf = () => VOCAB[Math.min(VOCAB.length - 1, Math.floor(Math.exp(rand() * Math.log(VOCAB.length))) - 1)];
const sentence = (i: number) => Array.from({ length: 25 + (i % 20) }, zipf).join(" ");
const WORDS = VOCAB.slice(20, 400);

type EngineResult = {
  engine: string;
  p50: Record<number, number>;
  p95: Record<number, number>;
  windowP95: Record<number, number>;
  /** The machine's floor in the same run: one `SELECT 1` through the same client after each turn. */
  select1P95: Record<number, number>;
};
const MEMORIES = 1_000;
/** Memories each earlier answer used (recorded as MemoryUse rows, as the chat does). */
const USES_PER_ANSWER = Number(process.env.BENCH_USES_PER_ANSWER ?? 5);
const OTHER_USERS = Number(process.env.BENCH_OTHER_USERS ?? 0);
const OTHER_MESSAGES = Number(process.env.BENCH_OTHER_MESSAGES ?? 2000);
/** Context assemblies timed after a pause longer than the pool's idle timeout (BENCH_PAUSES=0 to skip). */
const PAUSES = Number(process.env.BENCH_PAUSES ?? 5);
const PAUSE_MS = 11_000;
/** Projects the user has, each with its own memories and a thread (BENCH_PROJECTS=0 to skip the case). */
const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 10);
const PROJECT_MEMORIES = 100;
const PROJECT_MESSAGES = 1_000;
type ProjectCase = { p50: number; p95: number };
/** A shared project of this many people holding the 10,000-message thread (BENCH_SHARED_MEMBERS=0 to skip the case). */
const SHARED_MEMBERS = Number(process.env.BENCH_SHARED_MEMBERS ?? 5);
/** Messages of an earlier chat with vectors, searched by meaning in the first-token turns (BENCH_VECTOR_MESSAGES). */
const VECTOR_MESSAGES = Number(process.env.BENCH_VECTOR_MESSAGES ?? 10_000);
const VECTOR_DIMS = 512;
/** `--timeline`: when each step of the first-token turns ends, from the turn's start (lib/ops/turn-timeline.ts). */
const TIMELINE = process.argv.includes("--timeline");
type Steps = Record<string, number[]>;
type TurnCase = ProjectCase & { roundTrips: number; ttft: number[]; steps?: Steps };
/** The shared case, and the same rows in the user's own project measured first in the same run. */
type SharedCase = TurnCase & { baseline: TurnCase };
/** A PDF of this many pages attached to the 10,000-message thread (BENCH_DOCUMENT_PAGES=0 to skip the case). */
const DOCUMENT_PAGES = Number(process.env.BENCH_DOCUMENT_PAGES ?? 300);
/** The sidebar's search over the thread with the PDF: a word of one page, and the commonest word of all. */
type SearchCase = { rare: ProjectCase; common: ProjectCase; commonWithout: ProjectCase };
type DocumentCase = ProjectCase & { pages: number; tokens: number; search: SearchCase };
/** A word written on one page of the PDF only. */
const DOCUMENT_WORD = "quillwort";

/** A PDF of `pages` pages of generated prose, written by pdf-lib (wrapped to the page, as a report is). */
async function reportPdf(pages: number): Promise<Uint8Array> {
  const page = (p: number) => Array.from({ length: 10 }, (_, k) => sentence(p * 10 + k)).join(". ") + ".";
  const texts = Array.from({ length: pages }, (_, p) => page(p));
  texts[Math.floor(pages * 0.7)] += ` The ${DOCUMENT_WORD} grows by the pond.`;
  return pdfOf(texts, 9);
}

async function benchEngine(engine: "pglite" | "postgres"): Promise<
  EngineResult & {
    roundTrips: number;
    ttft: number[];
    steps?: Steps;
    afterPause: number[];
    projects: Partial<Record<"shared" | "project_only", ProjectCase>>;
    document: DocumentCase | null;
    sharedProject: SharedCase | null;
  }
> {
  const t = await createTestDb(engine);
  const user = await t.db.user.create({ data: { email: `bench-${engine}@example.com` } });
  const res: EngineResult = { engine, p50: {}, p95: {}, windowP95: {}, select1P95: {} };
  // The user has 1,000 long-term memories; recall searches them and the other threads.
  await t.db.memory.createMany({
    data: Array.from({ length: MEMORIES }, (_, i) => {
      const text = `Memory ${i}: ${sentence(i * 13).slice(0, 120)}`;
      return { userId: user.id, text, source: "inferred" as const, tokens: countTokens(text) };
    }),
  });
  // Optionally, other users sharing the database (BENCH_OTHER_USERS users with
  // BENCH_OTHER_MESSAGES messages each): recall must not slow down with them.
  for (let u = 0; u < OTHER_USERS; u++) {
    const other = await t.db.user.create({ data: { email: `other-${u}-${engine}@example.com` } });
    const th = await t.db.thread.create({ data: { userId: other.id } });
    for (let i = 0; i < OTHER_MESSAGES; i += 500) {
      await appendItems(
        t.db,
        th.id,
        Array.from({ length: Math.min(500, OTHER_MESSAGES - i) }, (_, k) => ({
          role: (i + k) % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: sentence(i + k + u * 7),
        })),
        { cipher: await threadCipher(t.db, th.id) },
      );
    }
  }
  // What a turn does: the window and the memory recall, read together, then the prompt.
  const assemble = async (threadId: string, leaf: string, question: string, scope: MemoryScope = GENERAL_SCOPE) => {
    const budget = getConfig().memory.tokenBudget;
    const u = inMemoryScope(await userContext(t.db, user.id), scope);
    const [ctx, r] = await readTogether(() =>
      Promise.all([
        loadContext(t.db, threadId, leaf, { cipher: u.cipher }),
        recall(u, question, { budget, excludeThreadId: threadId }),
      ]),
    );
    buildPrompt(ctx, memoryBlock(r));
  };
  const threads: Record<number, { id: string; leaf: string }> = {};
  for (const size of SIZES) {
    const thread = await t.db.thread.create({ data: { userId: user.id } });
    let leaf = "";
    for (let i = 0; i < size; i += 500) {
      const batch = Array.from({ length: Math.min(500, size - i) }, (_, k) => ({
        role: (i + k) % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: sentence(i + k),
      }));
      const added = await appendItems(t.db, thread.id, batch, { cipher: await threadCipher(t.db, thread.id) });
      leaf = added[added.length - 1].id;
    }
    threads[size] = { id: thread.id, leaf };
    // Each answer used a few memories (what "Memories used" records): a heavy user's uses grow with the history.
    await t.db.$executeRawUnsafe(
      `WITH m AS (SELECT array_agg(id ORDER BY id) AS ids FROM "Memory" WHERE "userId" = $2)
       INSERT INTO "MemoryUse" ("itemId", "memoryId", "userId")
       SELECT i.id, m.ids[1 + abs(hashtext(i.id || k)) % $4], $2 FROM m, "Item" i CROSS JOIN generate_series(1, $3::int) k
       WHERE i."threadId" = $1 AND i.role = 'assistant' ON CONFLICT DO NOTHING`,
      thread.id,
      user.id,
      USES_PER_ANSWER,
      MEMORIES,
    );
    await t.db.$executeRawUnsafe(
      `UPDATE "Memory" m SET "useCount" = u.n FROM (SELECT "memoryId", count(*)::int AS n FROM "MemoryUse" GROUP BY 1) u WHERE u."memoryId" = m.id`,
    );
    // What autovacuum (PostgreSQL) or the app's periodic upkeep (PGlite, lib/db/statistics.ts) does as a history grows.
    for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
    const times: number[] = [];
    const windowOnly: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < ITERATIONS + 20; i++) {
      const question = `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`;
      const t0 = performance.now();
      await assemble(thread.id, leaf, question);
      const t1 = performance.now();
      buildPrompt(await loadContext(t.db, thread.id, leaf, { cipher: await threadCipher(t.db, thread.id) }));
      const t2 = performance.now();
      await t.db.$queryRawUnsafe("SELECT 1");
      if (i >= 20) {
        times.push(t1 - t0); // first 20 warm up
        windowOnly.push(t2 - t1);
        floor.push(performance.now() - t2);
      }
    }
    res.p50[size] = percentile(times, 50);
    res.p95[size] = percentile(times, 95);
    res.windowP95[size] = percentile(windowOnly, 95);
    res.select1P95[size] = percentile(floor, 95);
  }

  const projects = await benchProjects(threads[TTFT_SIZE], assemble);
  const document = await benchDocument(threads[TTFT_SIZE]);

  // After a pause, as between a person's messages: past the pool's idle timeout (10 s), connections it let
  // close must be opened again and their server processes must plan the functions anew.
  const afterPause: number[] = [];
  for (let i = 0; i < PAUSES; i++) {
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    const t0 = performance.now();
    const question = `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`;
    await assemble(threads[TTFT_SIZE].id, threads[TTFT_SIZE].leaf, question);
    afterPause.push(performance.now() - t0);
  }

  // Round trips before the model call, and time to first token, on the 10,000-message thread.
  const mock = await startMockLlm();
  await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-chat" }, user.id);
  clearConnectionCache(t.db);
  // Sequential round trips: queries issued while an earlier one is still
  // running share its "wave"; a query issued after every earlier one finished
  // starts a new wave. Waves before the model request are what a turn waits for.
  let waves = 0;
  let inFlight = 0;
  let atModel = -1;
  mock.onRequest = () => {
    if (atModel < 0) atModel = waves;
  };
  const counted = t.db.$extends({
    query: {
      $allOperations: async ({ args, query }) => {
        if (inFlight === 0) waves++;
        inFlight++;
        try {
          return await query(args);
        } finally {
          inFlight--;
        }
      },
    },
  }) as unknown as typeof t.db;
  const vectors = await seedVectors();
  // As the server does at start: a first load slower than the question's wait sent turn 0 by words, and turn 1 (the
  // one counted) paid the first reads of the vectors, 5 round trips instead of 2.
  await warmBuiltinEmbedder(t.db);
  const { ttft, roundTrips, steps } = await timeTurns(threads[TTFT_SIZE].id, TTFT_TURNS, "question", vectors);
  const sharedProject = await benchShared(threads[TTFT_SIZE]);
  await mock.close();
  await t.close();
  return { ...res, roundTrips, ttft, steps, afterPause, projects, document, sharedProject };

  /**
   * With the built-in encoder on, the user's memories and VECTOR_MESSAGES messages of an earlier chat get vectors of
   * its size (random: the search's cost does not depend on what they mean), as the embed job would have stored them.
   * Returns what the embed job does between turns: the last turn's new messages get theirs, so each turn reads them.
   */
  async function seedVectors() {
    if (!getConfig().builtinEmbeddings || VECTOR_MESSAGES <= 0) return undefined;
    // Correlated with the row (`r.id`), so each row gets its own.
    const vector = Prisma.sql`(SELECT array_agg(random() - 0.5)::real[] FROM generate_series(1, ${VECTOR_DIMS}::int)
                                WHERE r.id IS NOT NULL)`;
    const stored = Prisma.sql`"embeddingModel" = ${BUILTIN_EMBEDDING_MODEL}, "vectorSeq" = pg_current_xact_id()::text::bigint`;
    const earlier = await t.db.thread.create({ data: { userId: user.id } });
    for (let b = 0; b < VECTOR_MESSAGES; b += 1000) {
      await t.db.$executeRaw`
        INSERT INTO "Item" (id, "threadId", "userId", position, role, content, "searchTokens", tokens, "createdAt",
                            "updatedAt")
        SELECT 'v' || g, ${earlier.id}, ${user.id}, g, 'user', 'x', '', 1, now(), now()
          FROM generate_series(${b}::int, ${Math.min(VECTOR_MESSAGES, b + 1000) - 1}::int) g`;
    }
    await t.db.$executeRaw`
      UPDATE "Item" i SET embedding = v.x, "vectorKey" = md5(v.x::text), ${stored}
        FROM (SELECT r.id AS g, ${vector} AS x FROM "Item" r WHERE r."threadId" = ${earlier.id}) v WHERE i.id = v.g`;
    await t.db.$executeRaw`
      UPDATE "Memory" m SET embedding = v.x, "embeddingModel" = ${BUILTIN_EMBEDDING_MODEL}
        FROM (SELECT r.id AS g, ${vector} AS x FROM "Memory" r WHERE r."userId" = ${user.id}) v WHERE m.id = v.g`;
    await ensureVectorIndex(t.db, VECTOR_DIMS);
    for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
    return async (threadId: string) => {
      await t.db.$executeRaw`
        UPDATE "Item" i SET embedding = v.x, "vectorKey" = md5(v.x::text), ${stored}
          FROM (SELECT r.id AS g, ${vector} AS x FROM "Item" r
                 WHERE r."threadId" = ${threadId} AND r."embeddingModel" IS NULL AND r.position >= ${TTFT_SIZE}) v
         WHERE i.id = v.g`;
    };
  }

  /**
   * `n` turns in the thread: the first token of each after the first two, and the round trips before the model of
   * the second (turns 0 and 1 run on the counting client; turn 0 warms the few-second model-connection cache, as
   * any running server has).
   */
  async function timeTurns(threadId: string, n: number, asked: string, vectors?: (threadId: string) => Promise<void>) {
    const out = { ttft: [] as number[], roundTrips: 0, steps: TIMELINE ? ({} as Steps) : undefined };
    for (let i = 0; i < n; i++) {
      await vectors?.(threadId);
      waves = 0;
      atModel = -1;
      const t0 = performance.now();
      const ended: Record<string, number> = {};
      const unwatch = TIMELINE ? watchTurnSteps((step) => (ended[step] ??= performance.now() - t0)) : () => {};
      let first = -1;
      for await (const ev of runTurn(
        i <= 1 ? counted : t.db,
        user.id,
        { kind: "send", threadId, content: `${asked} ${i}` },
        { defer: () => {} },
      )) {
        if (ev.type === "delta" && first < 0) first = performance.now() - t0;
      }
      if (i === 1) out.roundTrips = atModel;
      unwatch();
      if (i > 1) out.ttft.push(first);
      if (i > 1 && out.steps)
        for (const [step, at] of Object.entries({ ...ended, "first token": first })) (out.steps[step] ??= []).push(at);
    }
    return out;
  }

  /**
   * The big thread in a shared project of SHARED_MEMBERS people (each of the others with a chat of their own there,
   * the project with its memories), written by the bench's user: the turn's assembly under the project's key, the
   * round trips before the model, and the first token. Measured first with the same rows in the user's own
   * project-only project (the baseline: the same data, not shared), then after sharing it, so the ratio says what
   * sharing itself costs.
   */
  async function benchShared(big: { id: string; leaf: string }): Promise<SharedCase | null> {
    if (SHARED_MEMBERS <= 0) return null;
    const me = await userContext(t.db, user.id);
    const { id } = await createProject(me, { name: "Team", memoryMode: "project_only" });
    const chats: string[] = [];
    for (let k = 1; k < SHARED_MEMBERS; k++) {
      const th = await createThread(me, { projectId: id });
      chats.push(th.id);
      await appendItems(
        t.db,
        th.id,
        Array.from({ length: PROJECT_MESSAGES }, (_, i) => ({
          role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: sentence(k * 11 + i),
        })),
        { cipher: me.cipher },
      );
    }
    await t.db.memory.createMany({
      data: Array.from({ length: PROJECT_MEMORIES }, (_, i) => {
        const text = `Team memory ${i}: ${sentence(5000 + i).slice(0, 120)}`;
        return { userId: user.id, projectId: id, text, source: "inferred" as const, tokens: countTokens(text) };
      }),
    });
    await t.db.thread.update({ where: { id: big.id }, data: { projectId: id } });
    for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
    const own = await timeCase(big, me, id);

    // Shared: the same rows move to the project's account; the other chats become four members' own.
    await shareExistingProject(me, id);
    const owner = await projectAccess(me, id, "own");
    for (let k = 1; k < SHARED_MEMBERS; k++) {
      const m = await t.db.user.create({ data: { email: `member-${k}-${engine}@example.com` } });
      await inviteMember(owner, { email: m.email, role: "editor" });
      await t.db.thread.update({ where: { id: chats[k - 1] }, data: { authorId: m.id } });
    }
    for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
    const shared = await timeCase(big, me, id);
    return { ...shared, baseline: own };
  }

  /** The turn's assembly in the project (its context as the user reaches it) and 40 turns' first tokens. */
  async function timeCase(big: { id: string; leaf: string }, me: UserContext, projectId: string) {
    // The project's own memories and chats, as its turns read them (a project-only project's scope, in both cases).
    const content = inMemoryScope((await projectAccess(me, projectId, "write")).content, {
      projectId,
      general: false,
    });
    const budget = getConfig().memory.tokenBudget;
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS + 20; i++) {
      const question = `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`;
      const t0 = performance.now();
      const [ctx, r] = await readTogether(() =>
        Promise.all([
          loadContext(t.db, big.id, big.leaf, { cipher: content.cipher }),
          recall(content, question, { budget, excludeThreadId: big.id }),
        ]),
      );
      buildPrompt(ctx, memoryBlock(r));
      if (i >= 20) times.push(performance.now() - t0);
    }
    const turns = await timeTurns(big.id, 40, "team question");
    return { p50: percentile(times, 50), p95: percentile(times, 95), ...turns };
  }

  /** The big thread with a long PDF attached: the turn's assembly with the passages nearest each question. */
  async function benchDocument(big: { id: string; leaf: string }): Promise<DocumentCase | null> {
    if (DOCUMENT_PAGES <= 0) return null;
    const u = await userContext(t.db, user.id);
    const commonWithout = await timeSearch(u, VOCAB[0]);
    const meta = await saveUpload(u, "report.pdf", await reportPdf(DOCUMENT_PAGES));
    await indexDocument(t.db, meta.id); // its job's work: a long document's search rows
    await t.db.attachment.update({ where: { id: meta.id }, data: { threadId: big.id, itemId: big.leaf } });
    const { tokens } = await t.db.attachment.findUniqueOrThrow({ where: { id: meta.id }, select: { tokens: true } });
    const budget = getConfig().memory.tokenBudget;
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS + 20; i++) {
      const question = `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`;
      const t0 = performance.now();
      const [ctx, r, files] = await readTogether(() =>
        Promise.all([
          loadContext(t.db, big.id, big.leaf, { cipher: u.cipher }),
          recall(u, question, { budget, excludeThreadId: big.id }),
          threadAttachmentRows(t.db, big.id),
        ]),
      );
      const attached = await attachmentsForTurn(t.db, u.cipher, files, {
        windowItemIds: ctx.window.map((w) => w.id),
        question,
        budget: getConfig().attachments.tokenBudget,
        vision: false,
      });
      buildPrompt(ctx, memoryBlock(r), undefined, "", attached);
      if (i >= 20) times.push(performance.now() - t0);
    }
    const search = { rare: await timeSearch(u, DOCUMENT_WORD), common: await timeSearch(u, VOCAB[0]), commonWithout };
    await t.db.attachment.delete({ where: { id: meta.id } });
    return { p50: percentile(times, 50), p95: percentile(times, 95), pages: meta.pages ?? 0, tokens, search };
  }

  /** The sidebar's search for a word, first page of hits, timed. */
  async function timeSearch(u: UserContext, q: string): Promise<ProjectCase> {
    const times: number[] = [];
    for (let i = 0; i < 55; i++) {
      const t0 = performance.now();
      const { hits } = await searchMessages(u, { q });
      if (i >= 5) times.push(performance.now() - t0);
      if (!hits.length) throw new Error(`the search for "${q}" found nothing`);
    }
    return { p50: percentile(times, 50), p95: percentile(times, 95) };
  }

  /** The big thread moved into the first of PROJECTS projects (each with memories and a thread), timed per mode. */
  async function benchProjects(
    big: { id: string; leaf: string },
    run: (threadId: string, leaf: string, question: string, scope: MemoryScope) => Promise<void>,
  ) {
    const out: Partial<Record<"shared" | "project_only", ProjectCase>> = {};
    if (PROJECTS <= 0) return out;
    const ids: string[] = [];
    for (let p = 0; p < PROJECTS; p++) {
      const project = await t.db.project.create({ data: { userId: user.id, name: `Project ${p}` } });
      ids.push(project.id);
      await t.db.memory.createMany({
        data: Array.from({ length: PROJECT_MEMORIES }, (_, i) => {
          const text = `Project ${p} memory ${i}: ${sentence(p * 1000 + i).slice(0, 120)}`;
          return {
            userId: user.id,
            projectId: project.id,
            text,
            source: "inferred" as const,
            tokens: countTokens(text),
          };
        }),
      });
      const th = await t.db.thread.create({ data: { userId: user.id, projectId: project.id } });
      await appendItems(
        t.db,
        th.id,
        Array.from({ length: PROJECT_MESSAGES }, (_, k) => ({
          role: k % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: sentence(p * 7 + k),
        })),
        { cipher: await threadCipher(t.db, th.id) },
      );
    }
    for (const sql of UPKEEP_SQL) await t.db.$executeRaw(sql);
    await t.db.thread.update({ where: { id: big.id }, data: { projectId: ids[0] } });
    for (const memoryMode of ["shared", "project_only"] as const) {
      const scope = projectScope({ id: ids[0], memoryMode });
      const times: number[] = [];
      for (let i = 0; i < ITERATIONS + 20; i++) {
        const question = `what did we say about the ${WORDS[i % WORDS.length]} and memory ${i % 50}?`;
        const t0 = performance.now();
        await run(big.id, big.leaf, question, scope);
        if (i >= 20) times.push(performance.now() - t0);
      }
      out[memoryMode] = { p50: percentile(times, 50), p95: percentile(times, 95) };
    }
    await t.db.thread.update({ where: { id: big.id }, data: { projectId: null } });
    return out;
  }
}

/** `--runs N` (or BENCH_RUNS): N full runs; the summary gives the median and the worst across them. */
const runsArg = process.argv.indexOf("--runs");
const RUNS = Math.max(1, Number(runsArg >= 0 ? process.argv[runsArg + 1] : (process.env.BENCH_RUNS ?? 1)) || 1);

type RunResult = Awaited<ReturnType<typeof benchEngine>>;
const allRuns: RunResult[][] = [];
for (let run = 1; run <= RUNS; run++) {
  const results: RunResult[] = [];
  for (const engine of benchEngines()) results.push(await benchEngine(engine));
  allRuns.push(results);
  printRun(results, run);
}
if (RUNS > 1) printSummary(allRuns.flat());
process.exit(0);

function printRun(results: RunResult[], run: number) {
  console.log(
    `${RUNS > 1 ? `Run ${run} of ${RUNS}. ` : ""}Context assembly (${ITERATIONS} runs per size; history budget ${getConfig().chat.historyTokenBudget} tokens; memory budget ${getConfig().memory.tokenBudget} tokens; user with ${MEMORIES} memories, ${USES_PER_ANSWER} uses recorded per earlier answer; ${OTHER_USERS} other users x ${OTHER_MESSAGES} messages), ${os.cpus().length} cores, ${new Date().toISOString().slice(0, 10)}`,
  );
  console.log(
    table(
      results.flatMap((r) =>
        SIZES.map((s) => ({
          engine: r.engine,
          messages: s,
          p50_ms: round(r.p50[s]),
          p95_ms: round(r.p95[s]),
          "p95/p95(100)": round(r.p95[s] / r.p95[100]),
          window_only_p95_ms: round(r.windowP95[s]),
          select1_p95_ms: round(r.select1P95[s]),
        })),
      ),
    ),
  );
  console.log(
    table(
      results.map((r) => ({
        engine: r.engine,
        db_round_trips_before_model: r.roundTrips,
        ttft_p50_ms: round(percentile(r.ttft, 50)),
        ttft_p95_ms: round(percentile(r.ttft, 95)),
        [`after_${PAUSE_MS / 1000}s_pause_ms`]: r.afterPause.map((x) => round(x)).join(" ") || "-",
      })),
    ),
  );
  if (results.some((r) => r.steps))
    console.log(
      table(
        [...TURN_STEPS, "first token"].map((step) => ({
          [`step of a first-token turn (${TTFT_SIZE} messages), ended at`]: step,
          ...Object.fromEntries(
            results.map((r) => [`${r.engine}_p50_ms`, round(percentile(r.steps?.[step] ?? [NaN], 50))]),
          ),
        })),
      ),
    );
  if (PROJECTS > 0)
    console.log(
      table(
        results.flatMap((r) =>
          (["shared", "project_only"] as const).map((mode) => ({
            engine: r.engine,
            [`${TTFT_SIZE}_messages_in_project_of_${PROJECTS}`]: mode,
            p50_ms: round(r.projects[mode]?.p50 ?? NaN),
            p95_ms: round(r.projects[mode]?.p95 ?? NaN),
            "p95/p95(100)": round((r.projects[mode]?.p95 ?? NaN) / r.p95[100]),
          })),
        ),
      ),
    );
  if (results.some((r) => r.sharedProject))
    console.log(
      table(
        results.map((r) => ({
          engine: r.engine,
          [`${TTFT_SIZE}_messages_in_a_shared_project_of_${SHARED_MEMBERS}`]: "written by one member",
          p50_ms: round(r.sharedProject?.p50 ?? NaN),
          p95_ms: round(r.sharedProject?.p95 ?? NaN),
          "p95/p95(100)": round((r.sharedProject?.p95 ?? NaN) / r.p95[100]),
          db_round_trips_before_model: r.sharedProject?.roundTrips ?? NaN,
          ttft_p50_ms: round(percentile(r.sharedProject?.ttft ?? [NaN], 50)),
          ttft_p95_ms: round(percentile(r.sharedProject?.ttft ?? [NaN], 95)),
          // The same rows, not shared (the user's own project), measured first in the same run.
          own_p95_ms: round(r.sharedProject?.baseline.p95 ?? NaN),
          own_ttft_p50_ms: round(percentile(r.sharedProject?.baseline.ttft ?? [NaN], 50)),
          "p95/own": round((r.sharedProject?.p95 ?? NaN) / (r.sharedProject?.baseline.p95 ?? NaN)),
          "ttft_p50/own": round(
            percentile(r.sharedProject?.ttft ?? [NaN], 50) / percentile(r.sharedProject?.baseline.ttft ?? [NaN], 50),
          ),
        })),
      ),
    );
  if (results.some((r) => r.document))
    console.log(
      table(
        results.map((r) => ({
          engine: r.engine,
          [`${TTFT_SIZE}_messages_with_a_pdf`]: `${r.document?.pages} pages, ${r.document?.tokens} tokens`,
          p50_ms: round(r.document?.p50 ?? NaN),
          p95_ms: round(r.document?.p95 ?? NaN),
          "p95/p95(100)": round((r.document?.p95 ?? NaN) / r.p95[100]),
          search_rare_p50_p95_ms: `${round(r.document?.search.rare.p50 ?? NaN)} / ${round(r.document?.search.rare.p95 ?? NaN)}`,
          search_common_p50_p95_ms: `${round(r.document?.search.common.p50 ?? NaN)} / ${round(r.document?.search.common.p95 ?? NaN)}`,
          "common_p95/without_pdf": round(
            (r.document?.search.common.p95 ?? NaN) / (r.document?.search.commonWithout.p95 ?? NaN),
          ),
        })),
      ),
    );
  const pg = results.find((r) => r.engine === "postgres");
  const lite = results.find((r) => r.engine === "pglite");
  console.log(
    JSON.stringify({
      run,
      pglite_p95_ms_with_pdf: lite?.document ? round(lite.document.p95) : null,
      postgres_p95_ms_with_pdf: pg?.document ? round(pg.document.p95) : null,
      pglite_p95_ms_10000: lite ? round(lite.p95[10_000]) : null,
      pglite_p95_ms_100000: lite?.p95[100_000] ? round(lite.p95[100_000]) : null,
      postgres_p95_ms_100000: pg?.p95[100_000] ? round(pg.p95[100_000]) : null,
      pglite_ratio_10000_100: lite ? round(lite.p95[10_000] / lite.p95[100]) : null,
      postgres_p95_ms_10000: pg ? round(pg.p95[10_000]) : null,
      postgres_ratio_10000_100: pg ? round(pg.p95[10_000] / pg.p95[100]) : null,
      db_round_trips_before_model: Math.max(...results.map((r) => r.roundTrips)),
      ttft_overhead_p50_ms: round(percentile((lite ?? results[0]).ttft, 50)),
      shared_project_p95_ms: Object.fromEntries(results.map((r) => [r.engine, round(r.sharedProject?.p95 ?? NaN)])),
      shared_project_ttft_p50_ms: Object.fromEntries(
        results.map((r) => [r.engine, round(percentile(r.sharedProject?.ttft ?? [NaN], 50))]),
      ),
      // The same rows in the user's own project, measured first: what sharing itself costs.
      shared_project_own_p95_ms: Object.fromEntries(
        results.map((r) => [r.engine, round(r.sharedProject?.baseline.p95 ?? NaN)]),
      ),
      shared_project_own_ttft_p50_ms: Object.fromEntries(
        results.map((r) => [r.engine, round(percentile(r.sharedProject?.baseline.ttft ?? [NaN], 50))]),
      ),
    }),
  );
}

/** Across runs, per engine: the median and the worst p95 at the thread size the flat-cost promise is judged on. */
function printSummary(all: RunResult[]) {
  const size = SIZES.includes(10_000) ? 10_000 : Math.max(...SIZES);
  const rows = [...new Set(all.map((r) => r.engine))].map((engine) => {
    const mine = all.filter((r) => r.engine === engine);
    const p95 = mine.map((r) => r.p95[size]);
    const ratio = mine.map((r) => r.p95[size] / r.p95[100]);
    return {
      engine,
      runs: mine.length,
      [`p95_${size}_median_ms`]: round(percentile(p95, 50)),
      [`p95_${size}_worst_ms`]: round(Math.max(...p95)),
      ratio_median: round(percentile(ratio, 50)),
      ratio_worst: round(Math.max(...ratio)),
      round_trips_worst: Math.max(...mine.map((r) => r.roundTrips)),
    };
  });
  console.log(`Across ${RUNS} runs (median and worst):`);
  console.log(table(rows));
  console.log(JSON.stringify({ runs: RUNS, summary: rows }));
}
