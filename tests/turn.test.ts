// A whole turn against the mock model server over real HTTP, on a real database.
process.env.MNEMO_HISTORY_TOKEN_BUDGET = "300";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { userContext } from "@/lib/user-context";
import { collect, deferred } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { runTurn, stopTurn, type TurnEvent } from "@/lib/chat/turn";
import { threadView } from "@/lib/chat/threads";
import { recordSignOut } from "@/lib/auth/users";
import { addMemory } from "@/lib/memory/store";
import { getConfig } from "@/lib/config";
import { watchTurnSteps, type TurnStep } from "@/lib/ops/turn-timeline";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

describe.each(engines)("turns on %s", (engine) => {
  let t: TestDb;
  let userId: string;
  const { defer, flush } = deferred(() => t.db);
  beforeAll(async () => {
    t = await createTestDb(engine);
    userId = (await t.db.user.create({ data: { email: `turn-${engine}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, userId);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("saves the question first, streams the answer, records model and usage", async () => {
    mock.script({ match: "hello", content: "Hi there, friend." });
    const events = await collect(runTurn(t.db, userId, { kind: "send", content: "hello" }, { defer }));
    expect(events[0].type).toBe("start");
    expect(
      events
        .filter((e) => e.type === "delta")
        .map((e) => (e as { text: string }).text)
        .join(""),
    ).toBe("Hi there, friend.");
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.item).toMatchObject({ status: "complete", content: "Hi there, friend.", model: "mock-chat" });
    expect(done.item.promptTokens).toBeGreaterThan(0);
    const req = mock.chatRequests()[0].body;
    expect(req.model).toBe("mock-chat");
    expect(req.messages[0].role).toBe("system");
    expect(req.messages.at(-1)).toEqual({ role: "user", content: "hello" });
    await flush(); // the title is made after the answer, by the memory model
    const threadId = (events[0] as { threadId: string }).threadId;
    expect(mock.chatRequests().at(-1)?.body.model).toBe("mock-memory");
    expect((await t.db.thread.findUniqueOrThrow({ where: { id: threadId } })).title).toMatch(
      /^Mock answer to: User: hello/,
    );
  });

  it("the model is told the user's date, in the time zone the browser gives, else in UTC", async () => {
    const now = new Date();
    const day = (timeZone: string) => new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeZone }).format(now);
    mock.script({ match: "what day", content: "A fine day." });
    // The answer's request (the title is asked of the memory model after it).
    const answered = () =>
      mock
        .chatRequests()
        .filter((r) => r.body.model === "mock-chat")
        .at(-1)!.body;
    // Kiritimati is UTC+14 and Pago Pago UTC-11: the two are on different dates at every hour.
    for (const timeZone of ["Pacific/Kiritimati", "Pacific/Pago_Pago"]) {
      await collect(runTurn(t.db, userId, { kind: "send", content: "what day is it?", timeZone }, { defer }));
      const system = answered().messages[0].content as string;
      expect(system).toContain(`Today is ${day(timeZone)} (the user's time zone: ${timeZone}).`);
      expect(system.startsWith(getConfig().chat.systemPrompt)).toBe(true);
    }
    // An API client or an unknown zone: the date in UTC, and the turn goes on.
    await collect(
      runTurn(t.db, userId, { kind: "send", content: "what day now?", timeZone: "Mars/Olympus" }, { defer }),
    );
    const system = answered().messages[0].content as string;
    expect(system).toContain(`Today is ${day("UTC")} (UTC).`);
    expect(system).not.toContain("Mars");
  });

  it("a model that writes a NUL or a lone surrogate: the answer shown is the one stored, both characters made safe", async () => {
    mock.script({ match: "odd", content: "Odd\u0000 bytes \ud800 here.", chunkDelayMs: 1 });
    const events = await collect(runTurn(t.db, userId, { kind: "send", content: "odd characters?" }, { defer }));
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.item).toMatchObject({ status: "complete", content: "Odd bytes \ufffd here." });
    const stored = await t.db.item.findUniqueOrThrow({ where: { id: done.item.id } });
    expect(stored.content).toBe("Odd bytes \ufffd here.");
  });

  it("a turn reads its window and its recall in one statement", async () => {
    // An earlier thread, so recall has passages to search.
    await collect(runTurn(t.db, userId, { kind: "send", content: "my garden has tomatoes" }, { defer }));
    const reads: string[] = [];
    const db = t.db.$extends({
      query: {
        $allOperations: ({ args, operation, query }) => {
          if (operation === "$queryRawUnsafe") reads.push(String((args as unknown[])[0]));
          return query(args);
        },
      },
    }) as unknown as typeof t.db;
    const events = await collect(runTurn(db, userId, { kind: "send", content: "what grows in my garden?" }, { defer }));
    expect(events.at(-1)?.type).toBe("done");
    const window = reads.filter((sql) => sql.includes("mnemo_context_window("));
    expect(window).toHaveLength(1);
    for (const fn of ["mnemo_memory_profile(", "mnemo_recall_passages(", "mnemo_recent_exchanges("])
      expect(window[0]).toContain(fn);
    expect(reads.filter((sql) => sql.includes("mnemo_recall_passages("))).toHaveLength(1);
    await flush();
  });

  it("a session that was signed out cannot write, even with its old token, nor start a thread", async () => {
    const desk = { sid: "desk", authAt: Date.now() };
    const first = await collect(
      runTurn(t.db, userId, { kind: "send", content: "hello again" }, { defer, session: desk }),
    );
    const threadId = (first[0] as { threadId: string }).threadId;
    await recordSignOut(t.db, { sub: userId, sid: "desk" });
    await expect(
      collect(runTurn(t.db, userId, { kind: "send", threadId, content: "still there?" }, { defer, session: desk })),
    ).rejects.toMatchObject({ status: 401 });
    expect((await threadView(await userContext(t.db, userId), threadId)).items.map((i) => i.content)).not.toContain(
      "still there?",
    );
    const threads = await t.db.thread.count({ where: { userId } });
    await expect(
      collect(runTurn(t.db, userId, { kind: "send", content: "a new thread" }, { defer, session: desk })),
    ).rejects.toMatchObject({ status: 401 });
    expect(await t.db.thread.count({ where: { userId } })).toBe(threads);
    await flush();
  });

  it("a password change ends the other sessions on the chat's fast path; the session that made it goes on", async () => {
    const u = (await t.db.user.create({ data: { email: `pw-${engine}-${Date.now()}@example.com` } })).id;
    const laptop = { sid: "laptop", authAt: Date.now() - 60_000 };
    const phone = { sid: "phone", authAt: Date.now() - 60_000 };
    const first = await collect(runTurn(t.db, u, { kind: "send", content: "hi" }, { defer, session: laptop }));
    const threadId = (first[0] as { threadId: string }).threadId;
    await t.db.user.update({ where: { id: u }, data: { passwordChangedAt: new Date(), passwordSid: "phone" } });
    await expect(
      collect(runTurn(t.db, u, { kind: "send", threadId, content: "old laptop" }, { defer, session: laptop })),
    ).rejects.toMatchObject({ status: 401 });
    const ok = await collect(runTurn(t.db, u, { kind: "send", threadId, content: "phone" }, { defer, session: phone }));
    expect(ok.at(-1)).toMatchObject({ type: "done" });
    // A temporary password: no session of the account may chat until the user chooses their own.
    await t.db.user.update({ where: { id: u }, data: { mustChangePassword: true } });
    await expect(
      collect(runTurn(t.db, u, { kind: "send", threadId, content: "temp" }, { defer, session: phone })),
    ).rejects.toMatchObject({ status: 403 });
    await expect(
      collect(runTurn(t.db, u, { kind: "send", content: "temp new" }, { defer, session: phone })),
    ).rejects.toMatchObject({ status: 403 });
    const texts = (await threadView(await userContext(t.db, u), threadId)).items.map((i) => i.content);
    expect(texts).toContain("phone");
    expect(texts).not.toContain("old laptop");
    expect(texts).not.toContain("temp");
    expect(await t.db.thread.count({ where: { userId: u } })).toBe(1);
    await flush();
  });

  it("a failing model keeps the question and marks the answer failed; retry replaces it", async () => {
    mock.script({ match: "boom", status: 500 });
    const events = await collect(runTurn(t.db, userId, { kind: "send", content: "boom please" }, { defer }));
    const err = events.at(-1) as Extract<TurnEvent, { type: "error" }>;
    expect(err.type).toBe("error");
    expect(err.message).toMatch(/^The model server at 127\.0\.0\.1:\d+ failed \(500\)\. Try again\.$/);
    const threadId = (events[0] as { threadId: string }).threadId;
    let view = await threadView(await userContext(t.db, userId), threadId);
    expect(view.items.map((i) => [i.role, i.status])).toEqual([
      ["user", "complete"],
      ["assistant", "failed"],
    ]);
    await collect(runTurn(t.db, userId, { kind: "regenerate", threadId, itemId: err.item!.id }, { defer }));
    view = await threadView(await userContext(t.db, userId), threadId);
    expect(view.items.map((i) => [i.role, i.status])).toEqual([
      ["user", "complete"],
      ["assistant", "complete"],
    ]);
    expect(view.items[1].siblingIds).toHaveLength(1);
  });

  it("regenerate makes a new branch; both versions are kept", async () => {
    const events = await collect(runTurn(t.db, userId, { kind: "send", content: "pick a colour" }, { defer }));
    const threadId = (events[0] as { threadId: string }).threadId;
    const first = (events.at(-1) as Extract<TurnEvent, { type: "done" }>).item;
    await collect(runTurn(t.db, userId, { kind: "regenerate", threadId, itemId: first.id }, { defer }));
    const view = await threadView(await userContext(t.db, userId), threadId);
    expect(view.items[1].siblingIds).toHaveLength(2);
    expect(view.items[1].siblingIds[0]).toBe(first.id);
  });

  it("trims history to the token budget and sends a rolling summary in its place", async () => {
    const long = (n: number) => `turn ${n}: ` + "lorem ipsum dolor sit amet ".repeat(12);
    let threadId: string | undefined;
    for (let n = 1; n <= 6; n++) {
      mock.script({ match: `turn ${n}:`, content: `ok ${n}` });
      const ev = await collect(runTurn(t.db, userId, { kind: "send", threadId, content: long(n) }, { defer }));
      threadId = (ev[0] as { threadId: string }).threadId;
      await flush();
    }
    const summaries = await t.db.summary.findMany({ where: { threadId }, orderBy: { version: "asc" } });
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.map((s) => s.version)).toEqual(summaries.map((_, i) => i + 1));
    mock.script({ match: "final", content: "done" });
    await collect(runTurn(t.db, userId, { kind: "send", threadId, content: "final question" }, { defer }));
    const req = mock.chatRequests().filter((r) => JSON.stringify(r.body.messages).includes("final question"))[0].body;
    const texts: string[] = req.messages.map((m: { content: string }) => m.content);
    // In the one system message, after the system prompt.
    expect(texts[0]).toContain("\n\nSummary of the earlier part of this conversation");
    expect(texts.some((c) => c.startsWith("turn 1:"))).toBe(false); // fell out of the window
    expect(texts.at(-1)).toBe("final question");
    // whole turns only: every assistant message follows its question
    const roles = req.messages.map((m: { role: string }) => m.role).filter((r: string) => r !== "system");
    expect(roles[0]).toBe("user");
  });

  it("stop keeps the partial answer, marked stopped", async () => {
    mock.script({
      match: "long story",
      content: Array.from({ length: 300 }, (_, i) => `w${i}`).join(" "),
      chunkDelayMs: 5,
    });
    const gen = runTurn(t.db, userId, { kind: "send", content: "a long story" }, { defer });
    const events: TurnEvent[] = [];
    let stopped = false;
    for await (const e of gen) {
      events.push(e);
      if (!stopped && events.filter((x) => x.type === "delta").length === 20) {
        stopped = true;
        expect(await stopTurn(t.db, userId, (events[0] as { assistantItemId: string }).assistantItemId)).toBe(true);
      }
    }
    const done = events.at(-1) as Extract<TurnEvent, { type: "done" }>;
    expect(done.item.status).toBe("stopped");
    expect(done.item.content).toContain("w10");
    expect(done.item.content).not.toContain("w299");
  });

  it("refuses empty, over-long and foreign requests", async () => {
    await expect(collect(runTurn(t.db, userId, { kind: "send", content: "  \n " }))).rejects.toThrow("Type a message.");
    await expect(collect(runTurn(t.db, userId, { kind: "send", content: "x".repeat(20_001) }))).rejects.toThrow(
      /limited to 20,000 characters/,
    );
    const stranger = await t.db.user.create({ data: { email: `stranger-${engine}@example.com` } });
    const mine = await t.db.thread.findFirstOrThrow({ where: { userId } });
    await expect(
      collect(runTurn(t.db, stranger.id, { kind: "send", threadId: mine.id, content: "hi" })),
    ).rejects.toThrow("Thread not found.");
    expect(await stopTurn(t.db, stranger.id, "whatever")).toBe(false);
  });

  // What `bench:context --timeline` times (lib/ops/turn-timeline.ts).
  it("marks each step once on the timeline, in the order the turn takes them, and only while someone listens", async () => {
    await addMemory(await userContext(t.db, userId), { text: "Keeps bees", source: "explicit" }, "user", "said so");
    const heard: TurnStep[] = [];
    const stop = watchTurnSteps((step) => heard.push(step));
    mock.script({ match: "What do I keep?", content: "Bees, then." });
    await collect(runTurn(t.db, userId, { kind: "send", content: "What do I keep?" }, { defer }));
    stop();
    await flush();
    const steps: TurnStep[] = ["saved", "reads", "recall reads", "context", "request"];
    if (getConfig().builtinEmbeddings) steps.push("question vector");
    expect([...heard].sort()).toEqual([...steps].sort());
    const at = (s: TurnStep) => heard.indexOf(s);
    expect(at("saved")).toBeLessThan(at("reads"));
    expect(at("recall reads")).toBeLessThan(at("context"));
    expect(at("context")).toBeLessThan(at("request"));
    // Stopped: the next turn's steps reach nobody.
    mock.script({ match: "And now?", content: "Still bees." });
    await collect(runTurn(t.db, userId, { kind: "send", content: "And now?" }, { defer }));
    await flush();
    expect(heard).toHaveLength(steps.length);
  });
});
