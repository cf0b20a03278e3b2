// Learning from feedback: a 👎 with "too long" becomes a preference the next
// request carries; the same lesson again raises confidence instead of adding a
// copy; a correction in the next message is recorded against the answer it
// corrects; temporary chats and paused learning take no feedback.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { userContext } from "@/lib/user-context";
import { collect, deferred } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { rateAnswer, looksLikeCorrection } from "@/lib/memory/feedback";
import { addMemory } from "@/lib/memory/store";
import { runDueJobs } from "@/lib/jobs/worker";
import { feedbackByModel } from "@/lib/admin/feedback-stats";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const answerOf = (events: TurnEvent[]) => (events.at(-1) as Extract<TurnEvent, { type: "done" }>).item;

describe.each(engines)("feedback on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `fb-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("a 👎 and its comment a moment later make one memory-model call, with the comment; a lone 👎 waits its grace", async () => {
    const user = (await t.db.user.create({ data: { email: `fb-grace-${engine}@example.com` } })).id;
    const a = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain rainbows" })));
    mock.script({ match: "Feedback on an answer", json: { lesson: null }, times: 5 });
    const distils = () => mock.chatRequests().filter((r) => JSON.stringify(r.body).includes("Feedback on an answer"));

    // The thumb, then the comment typed 0.8 s later (as the browser sends them), then the worker.
    await rateAnswer(await userContext(t.db, user), { itemId: a.id, rating: -1 });
    await runDueJobs(t.db);
    expect(distils()).toHaveLength(0); // waiting for the comment
    await rateAnswer(await userContext(t.db, user), { itemId: a.id, rating: -1, comment: "Wrong colours order" });
    await runDueJobs(t.db);
    expect(distils()).toHaveLength(1);
    expect(JSON.stringify(distils()[0].body.messages)).toContain("Wrong colours order");
    // The first job comes due after the grace and stands down: still one call.
    await t.db.job.updateMany({ where: { kind: "feedback", status: "queued" }, data: { runAt: new Date(0) } });
    await runDueJobs(t.db);
    expect(distils()).toHaveLength(1);

    // A 👎 nobody comments on is read once its grace is over.
    const b = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain fog" })));
    await rateAnswer(await userContext(t.db, user), { itemId: b.id, rating: -1 });
    await runDueJobs(t.db);
    expect(distils()).toHaveLength(1);
    await t.db.job.updateMany({ where: { kind: "feedback", status: "queued" }, data: { runAt: new Date(0) } });
    await runDueJobs(t.db);
    expect(distils()).toHaveLength(2);
    expect(JSON.stringify(distils()[1].body.messages)).toContain("(no comment)");
  });

  it("thirty rating changes on one answer make at most two memory-model calls, and none for a user at a daily limit", async () => {
    const user = (await t.db.user.create({ data: { email: `fb-flap-${engine}@example.com` } })).id;
    const a = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain tides" })));
    mock.script({ match: "Feedback on an answer", json: { lesson: null }, times: 40 });
    const distils = () => mock.chatRequests().filter((r) => JSON.stringify(r.body).includes("Feedback on an answer"));
    const flap = async (itemId: string) => {
      for (let i = 0; i < 30; i++) {
        await rateAnswer(
          await userContext(t.db, user),
          i % 2 ? { itemId, rating: 1 } : { itemId, rating: -1, comment: `Wrong, try ${i}` },
        );
        await runDueJobs(t.db);
      }
      // Every grace period over: only where the rating settled is read.
      await t.db.job.updateMany({ where: { kind: "feedback", status: "queued" }, data: { runAt: new Date(0) } });
      await runDueJobs(t.db);
    };
    await flap(a.id);
    expect(distils().length).toBeGreaterThanOrEqual(1);
    expect(distils().length).toBeLessThanOrEqual(2);
    // At today's limit of answers: the ratings are kept, no model is asked.
    const b = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain waves" })));
    await t.db.user.update({ where: { id: user }, data: { dailyMessageLimit: 1 } });
    mock.reset();
    mock.script({ match: "Feedback on an answer", json: { lesson: null }, times: 40 });
    await flap(b.id);
    expect(distils()).toHaveLength(0);
    expect(await t.db.feedback.findFirstOrThrow({ where: { itemId: b.id, kind: "rating" } })).toMatchObject({
      rating: 1,
    });
  });

  it("👎 'too long' becomes a preference with its provenance; the next request carries it; again raises confidence", async () => {
    const user = (await t.db.user.create({ data: { email: `fb-${engine}@example.com` } })).id;
    const a1 = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain photosynthesis" })));
    mock.script({
      match: "Feedback on an answer",
      json: { lesson: { text: "Prefers short answers", kind: "preference" } },
      times: 2,
    });
    await rateAnswer(await userContext(t.db, user), { itemId: a1.id, rating: -1, comment: "Too long" });
    await runDueJobs(t.db);
    const distil = mock.chatRequests().find((r) => JSON.stringify(r.body).includes("Feedback on an answer"))!;
    expect(JSON.stringify(distil.body.messages)).toContain("Too long");
    const mems = await t.db.memory.findMany({ where: { userId: user } });
    expect(mems).toHaveLength(1);
    expect(mems[0]).toMatchObject({ text: "Prefers short answers", kind: "preference", sourceItemId: a1.id });
    const fb = await t.db.feedback.findFirstOrThrow({ where: { itemId: a1.id } });
    expect(mems[0].sourceFeedbackId).toBe(fb.id);
    expect(fb.processedAt).not.toBeNull();

    // A new chat: the preference is in the request.
    await collect(runTurn(t.db, user, { kind: "send", content: "What is a black hole?" }));
    expect(JSON.stringify(mock.chatRequests().at(-1)!.body.messages)).toContain("Prefers short answers");

    // The same lesson from another answer: still one memory, more confidence.
    const a2 = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Explain tides" })));
    await rateAnswer(await userContext(t.db, user), { itemId: a2.id, rating: -1, comment: "Too long again" });
    await runDueJobs(t.db);
    const after = await t.db.memory.findMany({ where: { userId: user, status: "active" } });
    expect(after).toHaveLength(1);
    expect(after[0].confidence).toBeGreaterThan(mems[0].confidence);

    // Admins see counts per model, nothing else.
    const stats = await feedbackByModel(t.db);
    expect(stats.filter((r) => r.model === "mock-chat").reduce((n, r) => n + r.down, 0)).toBeGreaterThanOrEqual(2);
    expect(Object.keys(stats[0]).sort()).toEqual(["down", "model", "up", "week"]);

    // The rating can be removed.
    expect(await rateAnswer(await userContext(t.db, user), { itemId: a2.id, rating: null })).toEqual({
      rating: null,
      comment: null,
    });
    expect(await t.db.feedback.count({ where: { itemId: a2.id } })).toBe(0);
  });

  it("a correction in the next message is feedback on the answer before it", async () => {
    const user = (await t.db.user.create({ data: { email: `corr-${engine}@example.com` } })).id;
    const first = await collect(runTurn(t.db, user, { kind: "send", content: "List three fruits" }));
    const threadId = (first[0] as Extract<TurnEvent, { type: "start" }>).threadId;
    mock.script({
      match: "Feedback on an answer",
      json: { lesson: { text: "Prefers answers without bullet points", kind: "preference" } },
    });
    const d = deferred(() => t.db);
    await collect(
      runTurn(
        t.db,
        user,
        { kind: "send", threadId, content: "No, don't use bullet points, write a sentence" },
        { defer: d.defer },
      ),
    );
    await d.flush();
    const fb = await t.db.feedback.findFirstOrThrow({ where: { userId: user } });
    expect(fb).toMatchObject({ kind: "correction", itemId: answerOf(first).id });
    expect((await t.db.memory.findFirstOrThrow({ where: { userId: user } })).text).toBe(
      "Prefers answers without bullet points",
    );
    expect(looksLikeCorrection("Thanks, that helps a lot")).toBe(false);
  });

  it("a correction of an answer that used a wrong memory corrects that memory, with a version", async () => {
    const user = (await t.db.user.create({ data: { email: `fix-${engine}@example.com` } })).id;
    await addMemory(await userContext(t.db, user), { text: "Lives in Lisbon", source: "explicit" }, "user", "test");
    const first = await collect(runTurn(t.db, user, { kind: "send", content: "Where do I live?" }));
    const answer = answerOf(first);
    const used = await t.db.memoryUse.findMany({ where: { itemId: answer.id } });
    expect(used).toHaveLength(1);
    const memoryId = used[0].memoryId;
    mock.script({
      match: "Feedback on an answer",
      json: { lesson: null, correct: { id: memoryId, text: "Lives in Porto" } },
    });
    const threadId = (first[0] as Extract<TurnEvent, { type: "start" }>).threadId;
    const d = deferred(() => t.db);
    await collect(
      runTurn(
        t.db,
        user,
        { kind: "send", threadId, content: "No, that's wrong: I moved to Porto last year" },
        { defer: d.defer },
      ),
    );
    await d.flush();
    const asked = JSON.stringify(
      mock.chatRequests().find((r) => JSON.stringify(r.body).includes("Feedback on an answer"))!.body,
    );
    expect(asked).toContain(`id=${memoryId}: \\"Lives in Lisbon\\"`);
    const m = await t.db.memory.findUniqueOrThrow({
      where: { id: memoryId },
      include: { versions: { orderBy: { createdAt: "asc" } } },
    });
    expect(m.text).toBe("Lives in Porto");
    expect(m.versions.at(-1)).toMatchObject({
      oldText: "Lives in Lisbon",
      newText: "Lives in Porto",
      reason: "Corrected by your feedback on an answer that used it",
    });
  });

  it("a memory the user said not to mention after the answer used it is not shown to the memory model", async () => {
    const user = (await t.db.user.create({ data: { email: `hush-${engine}@example.com` } })).id;
    const m = await addMemory(
      await userContext(t.db, user),
      { text: "Owes Marta 300 euros", source: "explicit" },
      "user",
      "test",
    );
    const answer = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "Whom do I owe money?" })));
    expect(await t.db.memoryUse.count({ where: { itemId: answer.id, memoryId: m.id } })).toBe(1);
    await t.db.memory.update({ where: { id: m.id }, data: { muted: true } });
    mock.script({ match: "Feedback on an answer", json: { lesson: null } });
    await rateAnswer(await userContext(t.db, user), { itemId: answer.id, rating: -1, comment: "Not helpful" });
    await runDueJobs(t.db);
    const asked = mock.chatRequests().filter((r) => JSON.stringify(r.body).includes("Feedback on an answer"));
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(asked[0].body)).not.toContain("Marta");
  });

  it("temporary chats and paused learning take no feedback", async () => {
    const user = (await t.db.user.create({ data: { email: `tmp-${engine}@example.com` } })).id;
    const tmp = answerOf(
      await collect(runTurn(t.db, user, { kind: "send", content: "temporary question", temporary: true })),
    );
    await expect(rateAnswer(await userContext(t.db, user), { itemId: tmp.id, rating: -1 })).rejects.toThrow(
      "Temporary chats keep no feedback.",
    );
    const kept = answerOf(await collect(runTurn(t.db, user, { kind: "send", content: "normal question" })));
    await t.db.user.update({ where: { id: user }, data: { memoryPaused: true } });
    await expect(rateAnswer(await userContext(t.db, user), { itemId: kept.id, rating: 1 })).rejects.toThrow(
      /Learning is paused/,
    );
    expect(await t.db.feedback.count({ where: { userId: user } })).toBe(0);
  });
});
