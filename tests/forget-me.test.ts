// "Forget me" against the order of events a real user (or an attacker who wants a memory back) produces: learning
// queued or already running when the user says it, feedback given before it, the summary of what Mnemo knows, and
// history imported after it. What existed when the user said "forget me" never comes back; what comes after is new.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { userContext } from "@/lib/user-context";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { runDueJobs } from "@/lib/jobs/worker";
import { addMemory, forgetEverything } from "@/lib/memory/store";
import { rateAnswer } from "@/lib/memory/feedback";
import { readAbout, refreshAbout } from "@/lib/memory/about";
import { recall } from "@/lib/memory/recall";
import { importConversations } from "@/lib/import/run";
import { startLearning } from "@/lib/import/learn";
import { searchMessages } from "@/lib/chat/search";
import { modelChange } from "@/lib/memory/writes";
import pg from "pg";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const answerOf = (events: TurnEvent[]) => (events.at(-1) as Extract<TurnEvent, { type: "done" }>).item;
const learnMiso = (delayMs = 0) =>
  mock.script({
    match: "latest exchange",
    json: { decisions: [{ op: "ADD", text: "Has a cat named Miso", kind: "fact", confidence: 0.9 }] },
    delayMs,
    times: 0,
  });

/** A ChatGPT export of one conversation, written in 2023 (its messages carry their own times). */
const oldExport = (id: string, words: string) =>
  JSON.stringify([
    {
      id,
      conversation_id: id,
      title: "Old chat",
      create_time: 1_690_000_000,
      current_node: "b",
      mapping: {
        r: { id: "r", parent: null, children: ["a"], message: null },
        a: {
          id: "a",
          parent: "r",
          children: ["b"],
          message: {
            author: { role: "user" },
            create_time: 1_690_000_000,
            content: { content_type: "text", parts: [words] },
          },
        },
        b: {
          id: "b",
          parent: "a",
          children: [],
          message: {
            author: { role: "assistant" },
            create_time: 1_690_000_010,
            content: { content_type: "text", parts: ["Noted."] },
          },
        },
      },
    },
  ]);

describe.each(engines)("forget me on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  const newUser = async () => (await t.db.user.create({ data: { email: `forget-${n++}-${engine}@example.com` } })).id;
  beforeAll(async () => {
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `forget-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("learning queued before it learns nothing after it", async () => {
    const user = await newUser();
    learnMiso();
    await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso" }));
    expect(await t.db.job.count({ where: { userId: user, kind: "extract", status: "queued" } })).toBe(1);
    await forgetEverything(t.db, user);
    expect((await runDueJobs(t.db)).failed).toBe(0);
    expect(await t.db.memory.count({ where: { userId: user } })).toBe(0);
    // What the user says after it is learned as usual.
    await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso, again" }));
    await runDueJobs(t.db);
    expect((await t.db.memory.findMany({ where: { userId: user } })).map((m) => m.text)).toEqual([
      "Has a cat named Miso",
    ]);
  });

  it("learning already waiting on the model when the user says it writes nothing", async () => {
    const user = await newUser();
    learnMiso(400);
    await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso" }));
    const running = runDueJobs(t.db);
    // The memory model has the exchange; the user says "forget me" before it answers.
    expect(await mock.chatRequestArrived("Latest exchange")).toBe(true);
    await forgetEverything(t.db, user);
    await running;
    expect(await t.db.memory.count({ where: { userId: user } })).toBe(0);
  });

  it.runIf(engine === "postgres")(
    "a write that lands after 'forget me' deleted the memories, but before it committed, is removed",
    async () => {
      const user = await newUser();
      mock.script({ match: "latest exchange", json: { decisions: [] }, times: 0 });
      const events = await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso" }));
      const threadId = (events[0] as { threadId: string }).threadId;
      const origin = {
        reason: "Learned from the conversation",
        sourceThreadId: threadId,
        sourceItemId: answerOf(events).parentId!,
      };
      // "Forget me" in another session, as lib/memory/long-term.ts runs it, held open before its commit: the
      // learner's first check cannot see it, and its memory is written after the deletion ran.
      const other = new pg.Client({ connectionString: t.url });
      await other.connect();
      await other.query("BEGIN");
      await other.query(`UPDATE "User" SET "memoryResetAt" = now() WHERE id = $1`, [user]);
      await other.query(`UPDATE "Thread" SET "recallFrom" = now() WHERE "userId" = $1`, [user]);
      await other.query(`DELETE FROM "Memory" WHERE "userId" = $1`, [user]);
      const add = { op: "add" as const, memory: { text: "Has a cat named Miso", source: "inferred" as const } };
      const learning = modelChange(await userContext(t.db, user), add, origin);
      await new Promise((r) => setTimeout(r, 300));
      await other.query("COMMIT");
      await other.end();
      expect(await learning).toMatchObject({ outcome: "refused" });
      expect(await t.db.memory.count({ where: { userId: user } })).toBe(0);
    },
  );

  it("a 👎 given before it teaches nothing after it", async () => {
    const user = await newUser();
    mock.script({ match: "latest exchange", json: { decisions: [] }, times: 0 });
    const a = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain rainbows" })));
    mock.script({
      match: "Feedback on an answer",
      json: { lesson: { text: "Prefers short answers", kind: "preference" } },
    });
    await rateAnswer(await userContext(t.db, user), { itemId: a.id, rating: -1, comment: "Far too long" });
    await forgetEverything(t.db, user);
    await t.db.job.updateMany({ where: { userId: user, status: "queued" }, data: { runAt: new Date(0) } });
    await runDueJobs(t.db);
    expect(await t.db.memory.count({ where: { userId: user } })).toBe(0);
  });

  it("a summary being written when the user says it is not stored after it", async () => {
    const user = await newUser();
    const u = await userContext(t.db, user);
    await addMemory(u, { text: "Owes Marta 300 euros", source: "explicit" }, "user", "x");
    mock.script({ json: { summary: "You owe Marta 300 euros." }, delayMs: 400 });
    const conn = { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" };
    const writing = refreshAbout(u, conn);
    for (let i = 0; i < 100 && !mock.chatRequests().length; i++) await new Promise((r) => setTimeout(r, 10));
    await forgetEverything(t.db, user);
    await writing;
    expect((await readAbout(u)).text).toBeNull();
  });

  it("the summary of what Mnemo knows goes with the memories", async () => {
    const user = await newUser();
    await t.db.user.update({
      where: { id: user },
      data: { aboutSummary: "You live in Porto and keep bees.", aboutSummaryAt: new Date(), aboutSummaryEdited: true },
    });
    await forgetEverything(t.db, user);
    expect((await readAbout(await userContext(t.db, user))).text).toBeNull();
  });

  it("learning from imported chats stops, and history imported after it is recalled and can be learned from", async () => {
    const user = await newUser();
    const u = await userContext(t.db, user);
    expect((await importConversations(u, [oldExport("c1", "My kumquat tree is called Herbert")])).messages).toBe(2);
    expect(JSON.stringify((await recall(u, "what is my kumquat tree called?", { budget: 1000 })).passages)).toContain(
      "Herbert",
    );
    await startLearning(t.db, user);
    await forgetEverything(t.db, user);
    mock.script({
      match: "latest exchange",
      json: { decisions: [{ op: "ADD", text: "Has a fig tree called Gustav", kind: "fact", confidence: 0.9 }] },
      times: 0,
    });
    await runDueJobs(t.db);
    expect(await t.db.memory.count({ where: { userId: user } })).toBe(0);
    expect((await recall(u, "what is my kumquat tree called?", { budget: 1000 })).passages).toEqual([]);

    // A model's search of past chats (MCP's search_conversations) finds nothing of it either; the user's own does.
    expect((await searchMessages(u, { q: "kumquat" }, { forModel: true })).hits).toEqual([]);
    expect((await searchMessages(u, { q: "kumquat" })).hits).toHaveLength(1);

    // Imported after "forget me": new to Mnemo, though its messages are from 2023.
    expect((await importConversations(u, [oldExport("c2", "My fig tree is called Gustav")])).messages).toBe(2);
    const found = await recall(u, "what is my fig tree called?", { budget: 1000 });
    expect(JSON.stringify(found.passages)).toContain("Gustav");
    expect(JSON.stringify(found.passages)).not.toContain("Herbert");
    await startLearning(t.db, user);
    await runDueJobs(t.db);
    // Only the conversation imported after it was read: Herbert's never reached the memory model.
    expect((await t.db.memory.findMany({ where: { userId: user } })).map((m) => m.text)).toEqual([
      "Has a fig tree called Gustav",
    ]);
    const asked = mock.chatRequests().map((r) => JSON.stringify(r.body));
    expect(asked.filter((b) => b.includes("Gustav") && b.includes("Latest exchange"))).toHaveLength(1);
    expect(asked.filter((b) => b.includes("Herbert"))).toHaveLength(0);
  });
});
