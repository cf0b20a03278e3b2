// The memory profile: when a user's memories fit the memory budget, all of
// them reach the model, whatever words the message uses; past the budget the
// core set (pinned, explicit, most used) stays and relevance fills the rest.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { addMemory } from "@/lib/memory/store";
import { recordUses } from "@/lib/answer/settle";
import { recall } from "@/lib/memory/recall";
import { CORE_SHARE, loadProfile, MEMORY_LINE_OVERHEAD, PROFILE_SHARE, profileSelection } from "@/lib/memory/profile";
import { appendItems } from "@/lib/memory/session";
import { countTokens } from "@/lib/memory/tokens";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const FOUR = [
  "I have a golden retriever named Max",
  "I work as a nurse at a children's hospital",
  "I am allergic to peanuts",
  "My sister Ana lives in Porto",
];

describe.each(engines)("memory profile on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `profile-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("questions that share no word with the memories still get all four", async () => {
    const user = (await t.db.user.create({ data: { email: `four-${engine}@example.com` } })).id;
    for (const text of FOUR)
      await addMemory(await userContext(t.db, user), { text, source: "manual" }, "user", "Added on the dashboard");
    for (const question of ["What pets do I have?", "Can you suggest a snack for me?", "What's my job?"]) {
      const events = await collect(runTurn(t.db, user, { kind: "send", content: question }));
      const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
      // All four are given to the model (used or not: the mock's answer draws on none of them).
      expect([...done.memoriesUsed, ...done.alsoGiven].map((m) => m.text).sort()).toEqual([...FOUR].sort());
      const sent = mock
        .chatRequests()
        .at(-1)!
        .body.messages.map((m: { content: string }) => m.content)
        .join("\n");
      for (const text of FOUR) expect(sent).toContain(`\n- ${text}\n`);
    }
  });

  it("past the budget, pinned and explicit memories stay and relevant ones fill the rest", async () => {
    const user = (await t.db.user.create({ data: { email: `many-${engine}@example.com` } })).id;
    const pinned = await addMemory(
      await userContext(t.db, user),
      { text: "Always answer in British English", source: "manual", pinned: true },
      "user",
      "t",
    );
    const explicit = await addMemory(
      await userContext(t.db, user),
      { text: "Is vegetarian", source: "explicit" },
      "user",
      "t",
    );
    for (let i = 0; i < 60; i++) {
      await addMemory(
        await userContext(t.db, user),
        { text: `Visited museum number ${i} in a city during a long trip number ${i}`, source: "inferred" },
        "model",
        "t",
      );
    }
    const relevant = await addMemory(
      await userContext(t.db, user),
      { text: "Plays the cello in an amateur orchestra", source: "inferred" },
      "model",
      "t",
    );
    // An inferred memory that earlier answers used is part of the core set, whatever the question.
    const used = await addMemory(
      await userContext(t.db, user),
      { text: "Lives on a houseboat", source: "inferred" },
      "model",
      "t",
    );
    await recordUses(t.db, user, "some-answer", [used.id]);
    const r = await recall(await userContext(t.db, user), "Which instrument do I play, the cello?", {
      budget: 200,
      passages: false,
    });
    const ids = r.memories.map((m) => m.id);
    expect(ids.slice(0, 3)).toEqual([pinned.id, explicit.id, used.id]);
    expect(ids).toContain(relevant.id);
    expect(r.tokens).toBeLessThanOrEqual(200);
  });

  it("a profile that nearly fills the budget leaves room for the passage a question needs, then fills what is left", async () => {
    const user = (await t.db.user.create({ data: { email: `near-full-${engine}@example.com` } })).id;
    for (let i = 0; i < 14; i++)
      await addMemory(
        await userContext(t.db, user),
        { text: `Visited museum number ${i} in a city during trip ${i}`, source: "inferred" },
        "model",
        "t",
      );
    const p = await loadProfile(await userContext(t.db, user), 100, 220);
    // Between the profile's share and the whole budget: every memory is read, not all go in first.
    expect(p.cost).toBeGreaterThan(220 * PROFILE_SHARE);
    expect(p.cost).toBeLessThanOrEqual(220);
    expect(profileSelection(p, 220).fits).toBe(false);
    const th = await t.db.thread.create({ data: { userId: user, title: "Boat" } });
    const answer = `The mooring fee for the houseboat is due every March, ${"and the harbour office wants it paid in person ".repeat(12)}`;
    await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: "When is the houseboat mooring fee due?" },
        { role: "assistant", content: answer },
      ],
      { cipher: await threadCipher(t.db, th.id) },
    );
    const r = await recall(await userContext(t.db, user), "When is my houseboat mooring fee due?", { budget: 220 });
    expect(r.passages.flatMap((x) => x.lines).join("\n")).toContain("due every March");
    // The memories still fill what the passage left (all of them and the passage would not fit).
    expect(r.memories.length).toBeGreaterThan(6);
    expect(r.memories.length).toBeLessThan(14);
    expect(r.tokens).toBeLessThanOrEqual(220);
    expect(220 - r.tokens).toBeLessThan(30);
  });

  it("uses are recorded once per answer, for the user's own memories only, and order the core set", async () => {
    const user = (await t.db.user.create({ data: { email: `uses-${engine}@example.com` } })).id;
    const other = (await t.db.user.create({ data: { email: `uses-other-${engine}@example.com` } })).id;
    const [a, b] = [
      await addMemory(await userContext(t.db, user), { text: "Grows tomatoes", source: "inferred" }, "model", "t"),
      await addMemory(await userContext(t.db, user), { text: "Keeps bees", source: "inferred" }, "model", "t"),
    ];
    const theirs = await addMemory(
      await userContext(t.db, other),
      { text: "Collects stamps", source: "inferred" },
      "model",
      "t",
    );
    await recordUses(t.db, user, "answer-1", [a.id, b.id, theirs.id]);
    await recordUses(t.db, user, "answer-1", [a.id, b.id]); // the same answer again
    await recordUses(t.db, user, "answer-2", [b.id]);
    const counts = async (id: string) => [
      (await t.db.memory.findUniqueOrThrow({ where: { id } })).useCount,
      await t.db.memoryUse.count({ where: { memoryId: id } }),
    ];
    expect(await counts(a.id)).toEqual([1, 1]);
    expect(await counts(b.id)).toEqual([2, 2]);
    expect(await counts(theirs.id)).toEqual([0, 0]);
    expect((await t.db.memory.findUniqueOrThrow({ where: { id: b.id } })).lastUsedAt).not.toBeNull();
    // Past the budget the core set is the used memories, most used first.
    for (let i = 0; i < 40; i++)
      await addMemory(
        await userContext(t.db, user),
        { text: `Visited museum number ${i} in a city during a long trip number ${i}`, source: "inferred" },
        "model",
        "t",
      );
    const r = await recall(await userContext(t.db, user), "anything new?", { budget: 100, passages: false });
    expect(r.memories.slice(0, 2).map((m) => m.text)).toEqual(["Keeps bees", "Grows tomatoes"]);
  });

  it("past the budget with no core memory, the totals still say it does not fit; expired and archived stay out", async () => {
    const user = (await t.db.user.create({ data: { email: `no-core-${engine}@example.com` } })).id;
    for (let i = 0; i < 30; i++)
      await addMemory(
        await userContext(t.db, user),
        { text: `Read book number ${i} on a rainy afternoon in the garden`, source: "inferred" },
        "model",
        "t",
      );
    const expired = await addMemory(
      await userContext(t.db, user),
      { text: "Is in Lisbon this week", source: "manual", pinned: true },
      "user",
      "t",
    );
    await t.db.memory.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 60_000) } });
    const archived = await addMemory(
      await userContext(t.db, user),
      { text: "Likes jazz", source: "explicit" },
      "user",
      "t",
    );
    await t.db.memory.update({ where: { id: archived.id }, data: { status: "archived" } });
    const forRecall = await loadProfile(await userContext(t.db, user), 50, 100);
    expect(forRecall.memories).toEqual([]);
    expect(forRecall.cost).toBeGreaterThan(100);
    expect(profileSelection(forRecall, 100).fits).toBe(false);
    // The dashboard counts every active memory.
    const all = await loadProfile(await userContext(t.db, user), 50);
    expect(all.count).toBe(30);
    expect(all.memories.map((m) => m.id)).not.toContain(expired.id);
    expect(all.memories.map((m) => m.id)).not.toContain(archived.id);
    expect(profileSelection(all, 100_000).fits).toBe(true);
  });

  it("past the budget, relevant memories fill as much of it as they need, not a fixed number", async () => {
    const user = (await t.db.user.create({ data: { email: `many-relevant-${engine}@example.com` } })).id;
    const lakes = Array.from({ length: 60 }, (_, i) => `Took the kayak out on lake number ${i} one summer`);
    const other = Array.from({ length: 240 }, (_, i) => `Visited museum number ${i} in a city during trip ${i}`);
    await t.db.memory.createMany({
      data: [...lakes, ...other].map((text) => ({ userId: user, text, source: "inferred", tokens: countTokens(text) })),
    });
    const r = await recall(await userContext(t.db, user), "Where have I taken the kayak?", {
      budget: 2000,
      passages: false,
    });
    // 300 memories do not fit 2,000 tokens; the 60 about kayaks (~900 tokens) do, and nothing else matches.
    expect(r.memories.filter((m) => m.text.includes("kayak"))).toHaveLength(60);
    expect(r.tokens).toBeLessThanOrEqual(2000);
  });

  it("past the budget, recall reads the core set only as far as its share of the budget, pinned ones always", async () => {
    const user = (await t.db.user.create({ data: { email: `core-share-${engine}@example.com` } })).id;
    // 60 explicit memories of ~12 tokens: the core share of 400 tokens (160) holds about 11 of them.
    for (let i = 0; i < 60; i++)
      await addMemory(
        await userContext(t.db, user),
        { text: `Said on day ${i} that the north garden needs watering`, source: "explicit" },
        "user",
        "t",
      );
    const pinned = await addMemory(
      await userContext(t.db, user),
      { text: "Pinned: call me Ro", source: "inferred", pinned: true },
      "user",
      "t",
    );
    const p = await loadProfile(await userContext(t.db, user), 100, 400);
    const unpinned = p.memories.filter((m) => !m.pinned);
    const cost = (ms: typeof unpinned) => ms.reduce((sum, m) => sum + m.tokens + MEMORY_LINE_OVERHEAD, 0);
    expect(p.memories.map((m) => m.id)).toContain(pinned.id);
    // Every row but the last was needed to reach the share; no more were read.
    expect(cost(unpinned.slice(0, -1))).toBeLessThan(400 * CORE_SHARE);
    expect(cost(unpinned)).toBeGreaterThanOrEqual(400 * CORE_SHARE);
    expect(unpinned.length).toBeLessThan(20);
    // What recall takes of it is unchanged: the core set within its share.
    const { take } = profileSelection(p, 400);
    expect(cost(take.filter((m) => !m.pinned))).toBeLessThanOrEqual(400 * CORE_SHARE);
  });
});
