// Undo takes a turn back, and what Mnemo learned from that turn goes with it: a memory it added is withdrawn
// (archived, restorable, saying why), one it rewrote gets its text back, learning still waiting on the model keeps
// nothing, and a write racing the undo is caught from either side. What the user has since touched stays.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import pg from "pg";
import { userContext } from "@/lib/user-context";
import { collect } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { connectToMock } from "@/testing/mock-connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { undoLastTurn } from "@/lib/chat/threads";
import { runDueJobs } from "@/lib/jobs/worker";
import { addMemory, setMemoryStatus, updateMemoryText } from "@/lib/memory/store";
import { modelChange, withdrawLearnedFrom } from "@/lib/memory/writes";
import { goneSources } from "@/lib/memory/provenance";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const threadOf = (events: TurnEvent[]) => (events[0] as { threadId: string }).threadId;
const userItemOf = (events: TurnEvent[]) =>
  (events.at(-1) as Extract<TurnEvent, { type: "done" }>).item.parentId as string;

describe.each(engines)("undo withdraws what the turn taught on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  const newUser = async () => (await t.db.user.create({ data: { email: `undo-${n++}-${engine}@example.com` } })).id;
  const memories = async (userId: string) =>
    (await t.db.memory.findMany({ where: { userId }, orderBy: { createdAt: "asc" } })).map((m) => [m.text, m.status]);
  beforeAll(async () => {
    t = await createTestDb(engine);
    await connectToMock(t.db, mock.url, `undo-${engine}`);
  });
  afterAll(async () => t?.close());

  it("a memory the turn added is withdrawn, one it rewrote gets its text back, one the user edited since stays", async () => {
    const user = await newUser();
    const u = await userContext(t.db, user);
    const earlier = await addMemory(u, { text: "Works as a nurse", source: "inferred" }, "model", "planted");
    const lisbon = await addMemory(u, { text: "Lives in Lisbon", source: "inferred" }, "model", "planted");
    mock.script({
      match: "latest exchange",
      json: {
        decisions: [
          { op: "ADD", text: "Has a cat named Miso", kind: "fact", confidence: 0.9 },
          { op: "ADD", text: "Likes jazz", kind: "preference", confidence: 0.9 },
          { op: "UPDATE", id: lisbon.id, text: "Lives in Porto", why: "changed" },
        ],
      },
    });
    const events = await collect(
      runTurn(t.db, user, { kind: "send", content: "We moved to Porto with our cat Miso; jazz on the radio" }),
    );
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const jazz = await t.db.memory.findFirstOrThrow({ where: { userId: user, text: "Likes jazz" } });
    await updateMemoryText(u, jazz.id, "Likes cool jazz", { actor: "user", source: "manual", reason: "edited" });

    expect(await t.db.memory.count({ where: { userId: user, status: "past", text: "Lives in Lisbon" } })).toBe(1);
    expect(await undoLastTurn(u, threadOf(events))).toEqual({ popped: 2, withdrawn: 2 });
    const after = await t.db.memory.findMany({ where: { userId: user } });
    const miso = after.find((m) => m.text === "Has a cat named Miso")!;
    expect(miso.status).toBe("archived");
    const history = await t.db.memoryVersion.findMany({ where: { memoryId: miso.id }, orderBy: { createdAt: "asc" } });
    expect(history.at(-1)).toMatchObject({
      actor: "user",
      reason: "Withdrawn: the message it was learned from was undone",
    });
    // The move it reported is taken back: Lisbon again, current, with no past copy left behind.
    expect(after.find((m) => m.id === lisbon.id)).toMatchObject({
      text: "Lives in Lisbon",
      status: "active",
      validFrom: lisbon.validFrom,
    });
    expect(after.filter((m) => m.status === "past")).toEqual([]);
    expect(after.find((m) => m.id === jazz.id)).toMatchObject({ text: "Likes cool jazz", status: "active" });
    expect(after.find((m) => m.id === earlier.id)).toMatchObject({ status: "active" });
    // The dashboard says the withdrawn memory's message is gone (and, once the chat is deleted, the chat).
    expect(await goneSources(t.db, user, [miso, jazz, earlier])).toEqual(
      new Map([
        [miso.id, "message"],
        [jazz.id, "message"],
      ]),
    );
    // Said again, it is learned again.
    mock.script({
      match: "latest exchange",
      json: { decisions: [{ op: "ADD", text: "Has a cat named Miso", kind: "fact", confidence: 0.9 }] },
    });
    await collect(
      runTurn(t.db, user, { kind: "send", content: "We have a cat named Miso", threadId: threadOf(events) }),
    );
    await runDueJobs(t.db);
    expect(await memories(user)).toContainEqual(["Has a cat named Miso", "active"]);
    await t.db.thread.delete({ where: { id: threadOf(events) } });
    expect(await goneSources(t.db, user, [miso])).toEqual(new Map([[miso.id, "chat"]]));
  });

  it("a correction the turn made is taken back with its source: the memory names the message it came from again", async () => {
    const user = await newUser();
    const u = await userContext(t.db, user);
    mock.script({
      match: "I play the violin",
      json: { decisions: [{ op: "ADD", text: "Plays the violin", kind: "fact", confidence: 0.9 }] },
    });
    const first = await collect(runTurn(t.db, user, { kind: "send", content: "I play the violin in a quartet" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const violin = await t.db.memory.findFirstOrThrow({ where: { userId: user, text: "Plays the violin" } });
    expect(violin.sourceItemId).toBe(userItemOf(first));
    mock.script({
      match: "actually the viola",
      json: { decisions: [{ op: "UPDATE", id: violin.id, text: "Plays the viola", why: "corrected" }] },
    });
    const second = await collect(
      runTurn(t.db, user, { kind: "send", content: "Sorry, actually the viola", threadId: threadOf(first) }),
    );
    expect((await runDueJobs(t.db)).failed).toBe(0);
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: violin.id } })).toMatchObject({
      text: "Plays the viola",
      sourceItemId: userItemOf(second),
    });
    await undoLastTurn(u, threadOf(first));
    const back = await t.db.memory.findUniqueOrThrow({ where: { id: violin.id } });
    expect(back).toMatchObject({
      text: "Plays the violin",
      status: "active",
      sourceThreadId: threadOf(first),
      sourceItemId: userItemOf(first),
    });
    // Its source is the message it was first learned from, still there: nothing says "source removed".
    expect(await goneSources(t.db, user, [back])).toEqual(new Map());
  });

  it("a memory the turn ended or forgot is current again; one the user changed since stays as they left it", async () => {
    const user = await newUser();
    const u = await userContext(t.db, user);
    const lisbon = await addMemory(u, { text: "Lives in Lisbon", source: "inferred" }, "model", "planted");
    const nurse = await addMemory(u, { text: "Works as a nurse", source: "inferred" }, "model", "planted");
    const rex = await addMemory(u, { text: "Has a dog named Rex", source: "inferred" }, "model", "planted");
    const gym = await addMemory(u, { text: "Goes to the gym on Mondays", source: "inferred" }, "model", "planted");
    // The extraction says two facts ended; the chat model forgets another on the user's word.
    mock.script(
      {
        match: "latest exchange",
        json: {
          decisions: [
            { op: "DELETE", id: lisbon.id },
            { op: "DELETE", id: nurse.id },
          ],
        },
      },
      { match: "forget the dog", toolCalls: [{ name: "forget", arguments: { ids: [rex.id, gym.id] } }] },
      { match: "forget the dog", content: "Done." },
    );
    const events = await collect(
      runTurn(t.db, user, { kind: "send", content: "I left Lisbon and quit nursing; forget the dog and the gym" }),
    );
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const status = async () =>
      Object.fromEntries(
        (await t.db.memory.findMany({ where: { userId: user } })).map((m) => [m.text, [m.status, m.validUntil]]),
      );
    expect(await status()).toMatchObject({
      "Lives in Lisbon": ["past", expect.any(Date)],
      "Works as a nurse": ["past", expect.any(Date)],
      "Has a dog named Rex": ["archived", null],
      "Goes to the gym on Mondays": ["archived", null],
    });
    // Since then the user restored the gym by hand and archived it again, and edited the nurse memory's text:
    // their word stands.
    await setMemoryStatus(u, gym.id, "active", "user", "Restored on the memory dashboard");
    await setMemoryStatus(u, gym.id, "archived", "user", "Forgotten on the memory dashboard");
    await updateMemoryText(u, nurse.id, "Worked as a nurse until 2026", {
      actor: "user",
      source: "manual",
      reason: "edited",
    });

    // The user's message, the tool call and its result, the answer.
    expect(await undoLastTurn(u, threadOf(events))).toEqual({ popped: 4, withdrawn: 2 });
    const after = await t.db.memory.findMany({ where: { userId: user } });
    const byId = (id: string) => after.find((m) => m.id === id)!;
    expect(byId(lisbon.id)).toMatchObject({ text: "Lives in Lisbon", status: "active", validUntil: null });
    expect(byId(lisbon.id).validFrom).toEqual(lisbon.validFrom);
    expect(byId(rex.id)).toMatchObject({ status: "active" });
    expect(byId(gym.id)).toMatchObject({ status: "archived" });
    expect(byId(nurse.id)).toMatchObject({ text: "Worked as a nurse until 2026", status: "past" });
    const history = await t.db.memoryVersion.findMany({
      where: { memoryId: lisbon.id },
      orderBy: { createdAt: "asc" },
    });
    expect(history.at(-1)).toMatchObject({
      actor: "user",
      reason: "Current again: the message that ended or forgot it was undone",
    });
  });

  it("a rewrite made since by consolidation stands: undo takes back only its own turn's change", async () => {
    const user = await newUser();
    const u = await userContext(t.db, user);
    const job = await addMemory(u, { text: "Works as a nurse", source: "inferred" }, "model", "planted");
    mock.script({
      match: "latest exchange",
      json: { decisions: [{ op: "UPDATE", id: job.id, text: "Works as a night nurse", why: "corrected" }] },
    });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "I work nights at the hospital" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    // Consolidation merges in another memory's detail: a model's rewrite, learned from no message.
    await updateMemoryText(u, job.id, "Works as a night nurse at Santa Maria", {
      actor: "model",
      source: "inferred",
      reason: "Consolidated",
    });
    expect(await undoLastTurn(u, threadOf(events))).toEqual({ popped: 2, withdrawn: 0 });
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({
      text: "Works as a night nurse at Santa Maria",
      status: "active",
    });
  });

  it("learning already waiting on the model when the turn is undone keeps nothing", async () => {
    const user = await newUser();
    mock.script({
      match: "latest exchange",
      json: { decisions: [{ op: "ADD", text: "Has a cat named Miso", kind: "fact", confidence: 0.9 }] },
      delayMs: 400,
    });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso" }));
    const running = runDueJobs(t.db);
    expect(await mock.chatRequestArrived("Latest exchange")).toBe(true);
    await undoLastTurn(await userContext(t.db, user), threadOf(events));
    expect((await running).failed).toBe(0);
    expect(await t.db.memory.count({ where: { userId: user, status: "active" } })).toBe(0);
  });

  it.runIf(engine === "postgres")(
    "a memory written or ended while the undo runs is taken back, whichever commits first",
    async () => {
      const user = await newUser();
      const u = await userContext(t.db, user);
      mock.script({ match: "latest exchange", json: { decisions: [] }, times: 0 });
      const add = (text: string) => ({ op: "add" as const, memory: { text, source: "inferred" as const } });
      const other = new pg.Client({ connectionString: t.url });
      await other.connect();
      try {
        // The write lands first: the undo's pop is held open (uncommitted) while the learner checks and writes;
        // then it commits and the undo's pass runs.
        let events = await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso" }));
        let origin = { reason: "Learned", sourceThreadId: threadOf(events), sourceItemId: userItemOf(events) };
        const items = (await t.db.item.findMany({ where: { threadId: threadOf(events) } })).map((i) => i.id);
        await other.query("BEGIN");
        await other.query(`UPDATE "Thread" SET "activeLeafId" = NULL WHERE id = $1`, [threadOf(events)]);
        await other.query(`DELETE FROM "Item" WHERE "threadId" = $1`, [threadOf(events)]);
        expect(await modelChange(u, add("Has a cat named Miso"), origin)).toMatchObject({ outcome: "applied" });
        await other.query("COMMIT");
        await withdrawLearnedFrom(u, items);
        expect(await memories(user)).toEqual([["Has a cat named Miso", "archived"]]);

        // The undo lands first: the learner has checked and is held at its write while the whole undo runs.
        events = await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a dog named Rex" }));
        origin = { reason: "Learned", sourceThreadId: threadOf(events), sourceItemId: userItemOf(events) };
        await other.query("BEGIN");
        await other.query(`LOCK TABLE "Memory" IN SHARE MODE`);
        const learning = modelChange(u, add("Has a dog named Rex"), origin);
        await new Promise((r) => setTimeout(r, 300));
        await undoLastTurn(u, threadOf(events));
        await other.query("COMMIT");
        expect(await learning).toMatchObject({ outcome: "refused" });
        expect(await memories(user)).toContainEqual(["Has a dog named Rex", "archived"]);
        expect(await t.db.memory.count({ where: { userId: user, status: "active" } })).toBe(0);

        // The same order for a "no longer true": the memory it ended is current again.
        const job = await addMemory(u, { text: "Works as a nurse", source: "inferred" }, "model", "planted");
        events = await collect(runTurn(t.db, user, { kind: "send", content: "I quit nursing" }));
        origin = { reason: "Ended", sourceThreadId: threadOf(events), sourceItemId: userItemOf(events) };
        await other.query("BEGIN");
        await other.query(`LOCK TABLE "Memory" IN SHARE MODE`);
        const ending = modelChange(u, { op: "end", id: job.id }, origin);
        await new Promise((r) => setTimeout(r, 300));
        await undoLastTurn(u, threadOf(events));
        await other.query("COMMIT");
        expect(await ending).toMatchObject({ outcome: "refused" });
        expect(await t.db.memory.findUniqueOrThrow({ where: { id: job.id } })).toMatchObject({
          status: "active",
          validUntil: null,
        });
      } finally {
        await other.end();
      }
    },
  );
});
