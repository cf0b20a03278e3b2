// Daily limits: past a user's message or token limit the question is saved and
// the answer fails with a clear sentence, without calling the model; other
// users and the admin page's counts are unaffected.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { userContext } from "@/lib/user-context";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { setUserLimits, usageTodayByUser } from "@/lib/account/usage-limits";
import { resolveConnection } from "@/lib/llm/connection";
import { extractMemories } from "@/lib/memory/extract";
import { UsageLimitSkip } from "@/lib/llm/metered";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const last = (events: TurnEvent[]) => events.at(-1) as Extract<TurnEvent, { type: "error" | "done" }>;

describe.each(engines)("daily usage limits on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `limits-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("past the message limit the question is kept and the answer says why; others are not limited", async () => {
    const user = (await t.db.user.create({ data: { email: `limited-${engine}@example.com` } })).id;
    const other = (await t.db.user.create({ data: { email: `free-${engine}@example.com` } })).id;
    await setUserLimits(t.db, user, { messages: 2, tokens: null });
    const first = await collect(runTurn(t.db, user, { kind: "send", content: "one" }));
    const threadId = (first[0] as Extract<TurnEvent, { type: "start" }>).threadId;
    await collect(runTurn(t.db, user, { kind: "send", threadId, content: "two" }));
    const before = mock.chatRequests().length;
    const third = await collect(runTurn(t.db, user, { kind: "send", threadId, content: "three" }));
    const end = last(third);
    expect(end.type).toBe("error");
    expect(end.item).toMatchObject({
      status: "failed",
      error: "You have reached today's limit of 2 messages. It resets at midnight UTC; your message is saved.",
    });
    expect(mock.chatRequests().length, "the model is not called").toBe(before);
    expect(await t.db.item.count({ where: { threadId, role: "user" } })).toBe(3);
    expect(last(await collect(runTurn(t.db, other, { kind: "send", content: "hello" }))).type).toBe("done");
    // The ledger counts answers asked of the model: the refused third is not one.
    expect((await usageTodayByUser(t.db, [user])).get(user)).toMatchObject({ messages: 2 });
    // Deleting the conversation gives nothing back, and a regenerate at the limit is refused too.
    const answer = (first.find((e) => e.type === "start") as Extract<TurnEvent, { type: "start" }>).assistantItemId;
    const calls = mock.chatRequests().length;
    const regen = await collect(runTurn(t.db, user, { kind: "regenerate", threadId, itemId: answer }));
    expect(last(regen).item?.error).toMatch(/today's limit of 2 messages/);
    await t.db.thread.deleteMany({ where: { userId: user } });
    const after = last(await collect(runTurn(t.db, user, { kind: "send", content: "four, in a new thread" })));
    expect(after.item?.error).toMatch(/today's limit of 2 messages/);
    expect(mock.chatRequests().length, "the model is still not called").toBe(calls);
  });

  it("background model calls count in the ledger and stop at the token limit", async () => {
    const user = (await t.db.user.create({ data: { email: `bg-${engine}@example.com` } })).id;
    const threadId = (await t.db.thread.create({ data: { userId: user } })).id;
    const conn = (await resolveConnection(t.db)) as Extract<
      Awaited<ReturnType<typeof resolveConnection>>,
      { configured: true }
    >;
    const learn = async () =>
      extractMemories(await userContext(t.db, user), conn.connection, {
        threadId,
        userItemId: "i",
        question: "I moved to Lisbon",
        answer: "ok",
        review: false,
      });
    mock.script({ json: { decisions: [{ op: "NONE" }] }, usage: { prompt_tokens: 30, completion_tokens: 5 } });
    await learn();
    const row = await t.db.usageDay.findFirstOrThrow({ where: { userId: user } });
    expect(row).toMatchObject({ turns: 0, modelCalls: 1, tokens: 35 });
    await setUserLimits(t.db, user, { messages: null, tokens: 30 });
    const calls = mock.chatRequests().length;
    await expect(learn()).rejects.toBeInstanceOf(UsageLimitSkip);
    expect(mock.chatRequests().length, "nothing is called past the limit").toBe(calls);
    expect((await t.db.usageDay.findFirstOrThrow({ where: { userId: user } })).modelCalls).toBe(1);
  });

  it("past the token limit the answer says so", async () => {
    const user = (await t.db.user.create({ data: { email: `tokens-${engine}@example.com` } })).id;
    await setUserLimits(t.db, user, { messages: null, tokens: 10 });
    mock.script({ match: "long", content: "A long answer", usage: { prompt_tokens: 40, completion_tokens: 20 } });
    expect(last(await collect(runTurn(t.db, user, { kind: "send", content: "a long question" }))).type).toBe("done");
    const end = last(await collect(runTurn(t.db, user, { kind: "send", content: "another" })));
    expect(end.item?.error).toBe("You have used today's 10 tokens. It resets at midnight UTC; your message is saved.");
    await setUserLimits(t.db, user, { messages: null, tokens: 0 }); // 0: no limit for this user
    expect(last(await collect(runTurn(t.db, user, { kind: "send", content: "and now?" }))).type).toBe("done");
  });
});
