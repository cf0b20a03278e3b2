// Memories that know when they were true (lib/memory/validity.ts): a replaced
// fact is closed, not hidden; recall gives it only for questions about the past,
// and the request the model receives says when it was true.
import { exchangeIds } from "@/testing/exchange";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { userContext } from "@/lib/user-context";
import { addMemory, setMuted, setPrivate } from "@/lib/memory/store";
import { importConversations } from "@/lib/import/run";
import { exportUserData } from "@/lib/account/export";
import { applyDecisions } from "@/lib/memory/extract";
import { memoryBlock, recall } from "@/lib/memory/recall";
import { pastQuestion, spanText, trueBeforeLearned } from "@/lib/memory/validity";
import { settleConflict } from "@/lib/memory/conflicts";
import { chatToolCaller, runMemoryTool } from "@/lib/memory/tools";
import { memoriesJson, importMemories } from "@/lib/memory/portable";
import { runTurn } from "@/lib/chat/turn";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { collect, deferred } from "./helpers/turns";

describe("questions about the past", () => {
  const now = new Date("2026-11-25T12:00:00Z");
  it.each([
    ["Where did I live last year?", true],
    ["What was my job before I moved?", true],
    ["Where was I working in March 2024?", true],
    ["Did I use to have a cat?", true],
    ["What were my hobbies in the past?", true],
    ["Where were my parents living at the time?", true],
    ["Where am I originally from?", true],
    ["Where do I live?", false],
    ["Any tips to sleep better tomorrow?", false],
    ["What should I cook tonight?", false],
    ["What are my hobbies?", false],
    ["Where are my parents living?", false],
  ])("%s → %s", (q, about) => {
    expect(pastQuestion(q, now).about).toBe(about);
  });

  it("a named month is a range recall can match a memory's span against", () => {
    const r = pastQuestion("Where was I working in March 2024?", now).ranges;
    expect(r).toEqual([{ start: new Date("2024-03-01T00:00:00Z"), end: new Date("2024-04-01T00:00:00Z") }]);
  });

  it("before a month, and a month with no year, are the last such month that has begun", () => {
    expect(pastQuestion("Where did I work before May?", now).ranges).toEqual([
      { start: new Date(0), end: new Date("2026-05-01T00:00:00Z") },
    ]);
    expect(pastQuestion("What did I do in December?", now).ranges).toEqual([
      { start: new Date("2025-12-01T00:00:00Z"), end: new Date("2026-01-01T00:00:00Z") },
    ]);
  });

  it("a span reads as months", () => {
    const from = new Date("2021-03-10T00:00:00Z");
    expect(spanText({ validFrom: from, validUntil: new Date("2025-06-02T00:00:00Z") })).toBe(
      "from March 2021 until June 2025",
    );
    expect(spanText({ validFrom: from, validUntil: null })).toBe("since March 2021");
  });

  it("a memory learned from old history shows its start; one learned as it was said does not", () => {
    const learned = new Date("2026-11-26T10:00:00Z");
    expect(trueBeforeLearned({ validFrom: new Date("2024-03-01T00:00:00Z"), createdAt: learned })).toBe(true);
    expect(trueBeforeLearned({ validFrom: null, createdAt: learned })).toBe(false);
    expect(trueBeforeLearned({ validFrom: new Date("2026-11-24T00:00:00Z"), createdAt: learned })).toBe(false);
  });
});

describe.each(engines)("memory validity on %s", (engine) => {
  let t: TestDb;
  let mock: MockLlm;
  let n = 0;
  const { defer, flush } = deferred(() => t.db);
  beforeAll(async () => {
    t = await createTestDb(engine);
    mock = await startMockLlm();
  });
  afterAll(async () => {
    await mock?.close();
    await t?.close();
  });
  beforeEach(() => mock.reset());

  const newUser = async () => {
    const id = (await t.db.user.create({ data: { email: `validity-${engine}-${n++}@example.com` } })).id;
    return userContext(t.db, id);
  };
  const block = async (u: Awaited<ReturnType<typeof newUser>>, q: string) =>
    memoryBlock(await recall(u, q, { budget: 1000, passages: false })) ?? "";

  it("an extraction UPDATE closes the old fact; recall gives it only when the question is about the past", async () => {
    const u = await newUser();
    const lisbon = await addMemory(u, { text: "Lives in Lisbon", source: "inferred" }, "model", "learned");
    await addMemory(u, { text: "Has a dog named Rex", source: "explicit" }, "user", "said so");
    await applyDecisions(u, { ...(await exchangeIds(t.db, u.userId)), review: false }, [
      { op: "UPDATE", id: lisbon.id, text: "Lives in Porto" },
    ]);
    const now = await block(u, "Where do I live?");
    expect(now).toContain("Lives in Porto");
    expect(now).not.toContain("Lisbon");
    const then = await block(u, "Where did I live last year?");
    expect(then).toContain("Lives in Porto");
    const month = new Intl.DateTimeFormat("en", { month: "long", year: "numeric", timeZone: "UTC" }).format(new Date());
    expect(then).toMatch(
      new RegExp(`True in the past[^\\n]*\\n- Lives in Lisbon \\((from ${month} )?until ${month}\\)`),
    );
    // A correction ("it was never right") changes the text in place: nothing is kept as past.
    const dog = await t.db.memory.findFirstOrThrow({ where: { userId: u.userId, text: "Has a dog named Rex" } });
    await applyDecisions(u, { ...(await exchangeIds(t.db, u.userId)), review: false }, [
      { op: "UPDATE", id: dog.id, text: "Has a dog named Rexy", why: "corrected" },
    ]);
    expect(await t.db.memory.count({ where: { userId: u.userId, status: "past" } })).toBe(1);
  });

  it("a past memory from a named time is found by the date, and the model's request carries it", async () => {
    const u = await newUser();
    await addMemory(
      u,
      {
        text: "Works as a nurse at Santa Maria hospital",
        source: "explicit",
        status: "past",
        validFrom: new Date("2022-01-01T00:00:00Z"),
        validUntil: new Date("2024-09-01T00:00:00Z"),
      },
      "user",
      "imported",
    );
    await addMemory(u, { text: "Works as a teacher", source: "explicit" }, "user", "said so");
    // No word in common with the memory: the date the question names matches its span.
    expect(await block(u, "What was I doing in March 2023?")).toContain(
      "Works as a nurse at Santa Maria hospital (from January 2022 until September 2024)",
    );
    expect(await block(u, "What was I doing in March 2025?")).not.toContain("nurse");
    // Through a whole turn: the request the test server receives.
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, u.userId);
    clearConnectionCache(t.db);
    await collect(runTurn(t.db, u.userId, { kind: "send", content: "Where did I work before?" }, { defer }));
    await flush();
    const sent = JSON.stringify(mock.chatRequests().find((r) => r.body.stream)?.body.messages);
    expect(sent).toContain("Works as a nurse at Santa Maria hospital");
    expect(sent).toContain("Works as a teacher");
    mock.reset();
    await collect(runTurn(t.db, u.userId, { kind: "send", content: "Where do I work?" }, { defer }));
    await flush();
    const present = JSON.stringify(mock.chatRequests().find((r) => r.body.stream)?.body.messages);
    expect(present).toContain("Works as a teacher");
    expect(present).not.toContain("nurse");
  });

  it("a question about time gets each memory's day, in the model's request too; others spend no budget on days", async () => {
    const u = await newUser();
    await addMemory(
      u,
      {
        text: "Started working at Acme as a designer",
        source: "explicit",
        validFrom: new Date("2023-05-08T09:00:00Z"),
      },
      "user",
      "imported",
    );
    await addMemory(u, { text: "Has a dog named Rex", source: "explicit" }, "user", "said so");
    const today = new Date().toISOString().slice(0, 10);
    const when = await block(u, "When did I start at Acme?");
    expect(when).toContain("Each memory is listed under the day it became true");
    // Oldest day first, each memory under its own.
    expect(when).toContain(
      `Facts:\n2023-05-08:\n- Started working at Acme as a designer\n${today}:\n- Has a dog named Rex`,
    );
    // The model's memory search says when too.
    const tool = await runMemoryTool(
      chatToolCaller(u, { threadId: "t", itemId: "i", userMessage: "Where did I work?", paused: false }),
      "search_memory",
      '{"query":"Acme designer"}',
    );
    expect(JSON.parse(tool.result).memories).toEqual([
      expect.objectContaining({ text: "Started working at Acme as a designer", since: "2023-05-08" }),
    ]);
    const what = await block(u, "What do I do at Acme?");
    expect(what).toContain("- Started working at Acme as a designer");
    expect(what).not.toContain("2023-05-08");
    expect(what).not.toContain("listed under the day");

    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, u.userId);
    clearConnectionCache(t.db);
    await collect(runTurn(t.db, u.userId, { kind: "send", content: "How long have I been at Acme?" }, { defer }));
    await flush();
    const sent = JSON.stringify(mock.chatRequests().find((r) => r.body.stream)?.body.messages);
    expect(sent).toContain("2023-05-08:\\n- Started working at Acme as a designer");
  });

  it("a memory found by search (more memories than the profile holds) carries its day too", async () => {
    const u = await newUser();
    for (let i = 0; i < 80; i++)
      await addMemory(
        u,
        { text: `Keeps notebook number ${i} on the shelf by the window`, source: "inferred" },
        "model",
        "learned",
      );
    await addMemory(
      u,
      { text: "Adopted a cat called Miso", source: "inferred", validFrom: new Date("2024-02-10T18:00:00Z") },
      "model",
      "learned",
    );
    const r = await recall(u, "When did I adopt Miso?", { budget: 600, passages: false });
    // Not every memory fits, so Miso came through the memory search, with its day.
    expect(r.memories.length).toBeLessThan(81);
    expect(r.memories.find((m) => m.text === "Adopted a cat called Miso")?.since).toEqual(
      new Date("2024-02-10T18:00:00Z"),
    );
    expect(memoryBlock(r)).toContain("2024-02-10:\n- Adopted a cat called Miso");
    // Within the budget, the day lines counted.
    expect(r.tokens).toBeLessThanOrEqual(600);
  });

  it("settling a conflict for the newer memory closes the older; keeping the older archives the newer", async () => {
    const u = await newUser();
    const old = await addMemory(u, { text: "Works at Acme", source: "explicit" }, "user", "said so");
    await new Promise((r) => setTimeout(r, 5));
    const newer = await addMemory(u, { text: "Works at Initech", source: "explicit" }, "user", "said so");
    await t.db.memory.update({ where: { id: old.id }, data: { conflictWithId: newer.id } });
    await t.db.memory.update({ where: { id: newer.id }, data: { conflictWithId: old.id } });
    await settleConflict(t.db, u.userId, { memoryId: newer.id, otherId: old.id, keep: "memory" });
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: old.id } })).toMatchObject({
      status: "past",
      supersededById: newer.id,
      validUntil: newer.createdAt,
    });

    const a = await addMemory(u, { text: "Drinks coffee", source: "explicit" }, "user", "said so");
    await new Promise((r) => setTimeout(r, 5));
    const b = await addMemory(u, { text: "Never drinks coffee", source: "explicit" }, "user", "said so");
    await t.db.memory.update({ where: { id: a.id }, data: { conflictWithId: b.id } });
    await t.db.memory.update({ where: { id: b.id }, data: { conflictWithId: a.id } });
    await settleConflict(t.db, u.userId, { memoryId: a.id, otherId: b.id, keep: "memory" });
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: b.id } })).toMatchObject({ status: "archived" });
  });

  it("a conflict settled in May: now gets the new fact, before May the old one, on the request the model receives", async () => {
    const u = await newUser();
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, u.userId);
    clearConnectionCache(t.db);
    const acme = await addMemory(u, { text: "Works at Acme as an engineer", source: "explicit" }, "user", "said so");
    const ini = await addMemory(u, { text: "Works at Initech as a manager", source: "explicit" }, "user", "said so");
    const may = new Date(Date.UTC(new Date().getUTCFullYear() - (new Date().getUTCMonth() < 4 ? 1 : 0), 4, 12));
    await t.db.memory.update({
      where: { id: acme.id },
      data: { createdAt: new Date(may.getTime() - 200 * 86_400_000), conflictWithId: ini.id },
    });
    await t.db.memory.update({ where: { id: ini.id }, data: { createdAt: may, conflictWithId: acme.id } });
    await settleConflict(t.db, u.userId, { memoryId: ini.id, otherId: acme.id, keep: "memory" });
    const sent = async (q: string) => {
      mock.reset();
      await collect(runTurn(t.db, u.userId, { kind: "send", content: q }, { defer }));
      await flush();
      return JSON.stringify(mock.chatRequests().find((r) => r.body.stream)?.body.messages);
    };
    const now = await sent("Where do I work now?");
    expect(now).toContain("Works at Initech as a manager");
    expect(now).not.toContain("Acme");
    const before = await sent("Where did I work before May?");
    expect(before).toContain("Works at Acme as an engineer");
    expect(before).toContain("until May");
  });

  it("the update_memory tool says whether the world changed; a memory said again is not its past self", async () => {
    const u = await newUser();
    const m = await addMemory(u, { text: "Lives in Lisbon", source: "inferred" }, "model", "learned");
    const { threadId, userItemId } = await exchangeIds(t.db, u.userId);
    const ctx = chatToolCaller(u, { threadId, itemId: userItemId, userMessage: "I moved to Porto.", paused: false });
    await runMemoryTool(ctx, "update_memory", JSON.stringify({ id: m.id, text: "Lives in Porto", why: "changed" }));
    expect(await t.db.memory.findFirst({ where: { userId: u.userId, status: "past" } })).toMatchObject({
      text: "Lives in Lisbon",
    });
    // Moving back: "Lives in Lisbon" is a new current memory, not the past one revived.
    const back = await addMemory(u, { text: "Lives in Lisbon", source: "explicit" }, "user", "said so");
    expect(back.status).toBe("active");
    expect(await t.db.memory.count({ where: { userId: u.userId, status: "past" } })).toBe(1);
  });

  it("the user's marks (don't mention, private, an expiry) survive the memories file and the full export", async () => {
    const u = await newUser();
    const hushed = await addMemory(u, { text: "Owes Marta 300 euros", source: "explicit" }, "user", "x");
    const secret = await addMemory(u, { text: "Takes sertraline", source: "explicit" }, "user", "x");
    const until = new Date(Date.now() + 7 * 86_400_000);
    await addMemory(u, { text: "Staying at Hotel Miramar", source: "explicit", expiresAt: until }, "user", "x");
    await setMuted(u, hushed.id, true);
    await setPrivate(u, secret.id, true);
    const marksOf = async (userId: string) =>
      (await t.db.memory.findMany({ where: { userId }, orderBy: { text: "asc" } })).map((m) => ({
        text: m.text,
        muted: m.muted,
        private: m.private,
        expiresAt: m.expiresAt?.toISOString() ?? null,
      }));
    const expected = await marksOf(u.userId);
    expect(expected.filter((m) => m.muted || m.private || m.expiresAt)).toHaveLength(3);
    // The memories file, into another account.
    const v = await newUser();
    await importMemories(v, JSON.parse(JSON.stringify(await memoriesJson(u))));
    expect(await marksOf(v.userId)).toEqual(expected);
    // The whole export, into a third.
    const w = await newUser();
    await importConversations(w, exportUserData(u));
    expect(await marksOf(w.userId)).toEqual(expected);
    // A file that marks private what the account already has unmarked: the stricter mark holds.
    const x = await newUser();
    await addMemory(x, { text: "Takes sertraline", source: "explicit" }, "user", "x");
    const r = await importMemories(x, JSON.parse(JSON.stringify(await memoriesJson(u))));
    expect(r).toMatchObject({ added: 2, skipped: 1 });
    expect(await t.db.memory.findFirst({ where: { userId: x.userId, text: "Takes sertraline" } })).toMatchObject({
      private: true,
    });
  });

  it("past memories and their spans round-trip through the memories file", async () => {
    const u = await newUser();
    const m = await addMemory(u, { text: "Lives in Lisbon", source: "inferred" }, "model", "learned");
    await applyDecisions(u, { ...(await exchangeIds(t.db, u.userId)), review: false }, [
      { op: "UPDATE", id: m.id, text: "Lives in Porto" },
    ]);
    const file = await memoriesJson(u);
    const v = await newUser();
    await importMemories(v, JSON.parse(JSON.stringify(file)));
    const past = await t.db.memory.findFirstOrThrow({ where: { userId: v.userId, status: "past" } });
    const original = file.memories.find((x) => x.status === "past")!;
    expect(past.text).toBe("Lives in Lisbon");
    expect(past.validUntil?.toISOString()).toBe(original.validUntil);
    expect(await t.db.memory.count({ where: { userId: v.userId, status: "active" } })).toBe(1);
  });
});
