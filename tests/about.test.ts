// "What Mnemo knows about you" (lib/memory/about.ts): written by the memory model
// from the active memories, kept in the user's words once they edit it, and
// given to the model in place of the memories that no longer fit.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { userContext, type UserContext } from "@/lib/user-context";
import { addMemory, deleteMemories, setMemoryStatus, setMuted, setPrivate, updateMemoryText } from "@/lib/memory/store";
import { runDueJobs } from "@/lib/jobs/worker";
import { readAbout, refreshAbout, releaseAbout, saveAbout } from "@/lib/memory/about";
import { memoryBlock, recall } from "@/lib/memory/recall";
import { runTurn } from "@/lib/chat/turn";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { collect, deferred } from "./helpers/turns";

describe.each(engines)("what Mnemo knows about you on %s", (engine) => {
  let t: TestDb;
  let mock: MockLlm;
  let n = 0;
  const { defer, flush } = deferred(() => t.db);
  const conn = () => ({ baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" });
  beforeAll(async () => {
    t = await createTestDb(engine);
    mock = await startMockLlm();
  });
  afterAll(async () => {
    await mock?.close();
    await t?.close();
  });
  beforeEach(() => mock.reset());
  const newUser = async () =>
    userContext(t.db, (await t.db.user.create({ data: { email: `about-${engine}-${n++}@example.com` } })).id);

  it("the model writes it from the active memories it may mention; the user's own words are kept", async () => {
    const u = await newUser();
    await addMemory(u, { text: "Has a dog named Rex", source: "explicit" }, "user", "said so");
    const secret = await addMemory(u, { text: "Is seeing a therapist", source: "explicit" }, "user", "said so");
    await setMuted(u, secret.id, true);
    mock.script({ json: { summary: "You have a dog named Rex." } });
    expect(await refreshAbout(u, conn())).toBe(true);
    const sent = JSON.stringify(mock.chatRequests()[0].body.messages);
    expect(sent).toContain("Has a dog named Rex");
    expect(sent).not.toContain("therapist"); // "Don't mention this" holds here too
    expect(await readAbout(u)).toMatchObject({ text: "You have a dog named Rex.", edited: false });
    // Nothing changed since: no model call.
    expect(await refreshAbout(u, conn())).toBe(false);
    expect(mock.chatRequests()).toHaveLength(1);
    // The user's words stay, even after the memories change.
    await saveAbout(u, "I'm a dog person. Rex is my best friend.");
    await addMemory(u, { text: "Works as a nurse", source: "explicit" }, "user", "said so");
    expect(await refreshAbout(u, conn())).toBe(false);
    expect(await readAbout(u)).toMatchObject({ text: "I'm a dog person. Rex is my best friend.", edited: true });
    // Until they ask for a new one.
    await releaseAbout(u);
    mock.script({ json: { summary: "You have a dog named Rex and work as a nurse." } });
    expect(await refreshAbout(u, conn())).toBe(true);
    expect(await readAbout(u)).toMatchObject({ text: "You have a dog named Rex and work as a nurse.", edited: false });
    await expect(saveAbout(u, "x".repeat(1201))).rejects.toThrow();
  });

  const userEdit = { actor: "user" as const, source: "manual" as const, reason: "Edited on the dashboard" };
  const fill = async (u: UserContext, count: number) => {
    for (let i = 0; i < count; i++)
      await addMemory(
        u,
        { text: `Collects vintage item number ${i} from the market in town ${i}`, source: "inferred" },
        "model",
        "learned",
      );
  };

  /** A user who chats, with more memories than the prompt's budget holds (written at once): the summary stands in. */
  const chattingOverBudget = async () => {
    const u = await newUser();
    await saveConnection(t.db, conn(), u.userId);
    clearConnectionCache(t.db);
    await t.db.memory.createMany({
      data: Array.from({ length: 400 }, (_, i) => ({
        userId: u.userId,
        text: `Collects vintage item number ${i} from the market in town ${i}`,
        source: "inferred" as const,
        tokens: 14,
      })),
    });
    return u;
  };

  it("stands in for the profile only when the memories do not all fit", async () => {
    const small = await newUser();
    await fill(small, 3);
    const fits = await recall(small, "hello", { budget: 2000, passages: false, about: "You collect vintage things." });
    expect(memoryBlock(fits)).not.toContain("You collect vintage things.");
    const big = await newUser();
    await fill(big, 60);
    const over = await recall(big, "hello", { budget: 300, passages: false, about: "You collect vintage things." });
    expect(over.about).toBe("You collect vintage things.");
    expect(memoryBlock(over)).toContain(
      "Summary of everything remembered about the user:\nYou collect vintage things.",
    );
    expect(over.tokens).toBeLessThanOrEqual(300);
  });

  it("a memory the user mutes, makes private, deletes or rewrites takes the summary out of prompts until rewritten", async () => {
    const u = await chattingOverBudget();
    const prompt = async (q: string) => {
      await collect(runTurn(t.db, u.userId, { kind: "send", content: q }, { defer }));
      await flush();
      return JSON.stringify(mock.chatRequests().find((r) => r.body.stream && JSON.stringify(r.body).includes(q))?.body);
    };
    const marks: Array<[string, string, (id: string) => Promise<unknown>]> = [
      ["mute", "Marta", (id) => setMuted(u, id, true)],
      ["private", "Bruno", (id) => setPrivate(u, id, true)],
      ["delete", "Carla", (id) => deleteMemories(t.db, u.userId, [id])],
      ["archive", "Dario", (id) => setMemoryStatus(u, id, "archived", "user", "Archived on the dashboard")],
      ["edit", "Elena", (id) => updateMemoryText(u, id, "Owes a friend some money", userEdit)],
    ];
    for (const [what, name, mark] of marks) {
      const debt = await addMemory(u, { text: `Owes ${name} 300 euros`, source: "explicit" }, "user", "x");
      mock.reset();
      mock.script({ json: { summary: `You owe ${name} 300 euros and collect vintage things.` } });
      expect(await refreshAbout(u, conn())).toBe(true);
      mock.script({ content: "ok", times: 0 });
      expect(await prompt(`Anything planned? ${what}`), what).toContain(`You owe ${name} 300 euros`);
      await mark(debt.id);
      // The next turn's prompt no longer carries it (a private memory itself still goes to this local test server).
      const after = await prompt(`What do I owe? ${what}`);
      expect(after, what).not.toContain(`You owe ${name}`);
      if (what !== "private") expect(after, what).not.toContain(name);
      // The summary is written again soon (queued), from what may now be mentioned.
      mock.reset();
      mock.script({ json: { summary: "You collect vintage things." } });
      await t.db.job.updateMany({ where: { userId: u.userId, status: "queued" }, data: { runAt: new Date(0) } });
      await runDueJobs(t.db);
      expect((await readAbout(u)).text, what).toBe("You collect vintage things.");
    }
  });

  it("a summary being written when the user mutes a memory it read is not stored; the rewrite after it is", async () => {
    const u = await newUser();
    const debt = await addMemory(u, { text: "Owes Marta 300 euros", source: "explicit" }, "user", "x");
    await addMemory(u, { text: "Has a dog named Rex", source: "explicit" }, "user", "x");
    mock.script({ json: { summary: "You owe Marta 300 euros and have a dog named Rex." }, delayMs: 400 });
    const writing = refreshAbout(u, conn());
    for (let i = 0; i < 100 && !mock.chatRequests().length; i++) await new Promise((r) => setTimeout(r, 10));
    await setMuted(u, debt.id, true);
    expect(await writing).toBe(false);
    expect((await readAbout(u)).text).toBeNull();
    mock.script({ json: { summary: "You have a dog named Rex." } });
    expect(await refreshAbout(u, conn())).toBe(true);
    expect((await readAbout(u)).text).toBe("You have a dog named Rex.");
    expect(JSON.stringify(mock.chatRequests().at(-1)!.body)).not.toContain("Marta");
  });

  it("a turn reads it in its append statement and sends it when the memories exceed the budget", async () => {
    const u = await chattingOverBudget();
    await saveAbout(u, "You love markets and collect vintage things.");
    await collect(runTurn(t.db, u.userId, { kind: "send", content: "What should I do this weekend?" }, { defer }));
    await flush();
    const sent = JSON.stringify(mock.chatRequests().find((r) => r.body.stream)?.body.messages);
    expect(sent).toContain("You love markets and collect vintage things.");
  });
});
