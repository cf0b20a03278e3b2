import { NotFoundError } from "@/lib/errors";
import { threadCipher } from "@/testing/ciphers";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { PrismaSession, appendItems } from "@/lib/memory/session";
import { loadContext } from "@/lib/chat/context";

describe.each(engines)("Session on %s", (engine) => {
  let t: TestDb;
  let userId: string;
  let session: PrismaSession;
  beforeAll(async () => {
    t = await createTestDb(engine);
    userId = (await t.db.user.create({ data: { email: `s-${engine}@example.com` } })).id;
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    const th = await t.db.thread.create({ data: { userId } });
    session = new PrismaSession(t.db, th.id, await threadCipher(t.db, th.id));
  });

  it("starts empty; popItem on an empty session returns null", async () => {
    expect(await session.getItems()).toEqual([]);
    expect(await session.popItem()).toBeNull();
  });

  it("getItems returns the newest N in chronological order; 0 gives none, more than exist gives all", async () => {
    await session.addItems([
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
    ]);
    await session.addItems([
      { role: "user", content: "q2" },
      { role: "assistant", content: "a2" },
    ]);
    expect((await session.getItems()).map((i) => i.content)).toEqual(["q1", "a1", "q2", "a2"]);
    expect((await session.getItems(3)).map((i) => i.content)).toEqual(["a1", "q2", "a2"]);
    expect(await session.getItems(0)).toEqual([]);
    expect((await session.getItems(100)).map((i) => i.content)).toEqual(["q1", "a1", "q2", "a2"]);
    const positions = (await session.getItems()).map((i) => i.position);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(positions).size).toBe(4);
  });

  it("keeps tool calls and results, and counts tokens", async () => {
    const [call, result] = await session.addItems([
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "search_memory", arguments: '{"q":"tea"}' }] },
      { role: "tool", content: "[]", toolCallId: "c1", toolName: "search_memory" },
    ]);
    expect(call.toolCalls).toEqual([{ id: "c1", name: "search_memory", arguments: '{"q":"tea"}' }]);
    expect(result.toolCallId).toBe("c1");
    expect(result.parentId).toBe(call.id);
    expect(call.tokens).toBeGreaterThan(4);
  });

  it("popItem returns the newest and removes it; clearSession removes all", async () => {
    await session.addItems([
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
    ]);
    expect((await session.popItem())?.content).toBe("a1");
    expect((await session.getItems()).map((i) => i.content)).toEqual(["q1"]);
    await session.addItems([{ role: "assistant", content: "a1b" }]);
    expect((await session.getItems()).map((i) => i.content)).toEqual(["q1", "a1b"]);
    await session.clearSession();
    expect(await session.getItems()).toEqual([]);
    expect(await t.db.item.count({ where: { threadId: session.getSessionId() } })).toBe(0);
    await session.addItems([{ role: "user", content: "after clear" }]);
    expect((await session.getItems()).map((i) => i.content)).toEqual(["after clear"]);
  });

  it("branches: appending under an earlier item leaves the old branch intact", async () => {
    const [q1, a1] = await session.addItems([
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
    ]);
    await session.addItems([
      { role: "user", content: "q2" },
      { role: "assistant", content: "a2" },
    ]);
    await appendItems(
      t.db,
      session.getSessionId(),
      [
        { role: "user", content: "q2 edited" },
        { role: "assistant", content: "a2'" },
      ],
      { cipher: await threadCipher(t.db, session.getSessionId()), parent: a1.id },
    );
    expect((await session.getItems()).map((i) => i.content)).toEqual(["q1", "a1", "q2 edited", "a2'"]);
    expect(await t.db.item.count({ where: { threadId: session.getSessionId() } })).toBe(6);
    expect((await session.getItems())[0].id).toBe(q1.id);
  });

  it("refuses an append by another user or to a missing thread", async () => {
    const other = await t.db.user.create({ data: { email: `o-${engine}-${Date.now()}@example.com` } });
    expect(
      await appendItems(t.db, session.getSessionId(), [{ role: "user", content: "x" }], {
        cipher: await threadCipher(t.db, session.getSessionId()),
        as: { actorId: other.id, userId: other.id },
      }),
    ).toEqual([]);
    expect(await t.db.item.count({ where: { threadId: session.getSessionId() } })).toBe(0);
    await expect(
      new PrismaSession(t.db, "missing", await threadCipher(t.db, "missing")).addItems([
        { role: "user", content: "x" },
      ]),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      new PrismaSession(t.db, "missing", await threadCipher(t.db, "missing")).getItems(),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it("deleting a thread deletes its items", async () => {
    await session.addItems([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    await t.db.thread.delete({ where: { id: session.getSessionId() } });
    expect(await t.db.item.count({ where: { threadId: session.getSessionId() } })).toBe(0);
  });

  it("2 x 50 concurrent writers never lose, duplicate or interleave a batch", async () => {
    const other = await t.newClient();
    const writers = [t.db, other.db];
    const cipher = await threadCipher(t.db, session.getSessionId());
    const batches = writers.flatMap((db, w) =>
      Array.from({ length: 50 }, (_, b) =>
        new PrismaSession(db, session.getSessionId(), cipher).addItems([
          { role: "user", content: `w${w}-b${b}-0` },
          { role: "assistant", content: `w${w}-b${b}-1` },
          { role: "user", content: `w${w}-b${b}-2` },
        ]),
      ),
    );
    await Promise.all(batches);
    await other.close();
    const items = await session.getItems();
    expect(items).toHaveLength(300);
    expect(new Set(items.map((i) => i.content)).size).toBe(300);
    for (let i = 0; i < items.length; i += 3) {
      const [a, b, c] = items.slice(i, i + 3).map((x) => x.content);
      const prefix = a.slice(0, -2);
      expect([a, b, c]).toEqual([`${prefix}-0`, `${prefix}-1`, `${prefix}-2`]);
    }
    // The path is a single chain: every item's parent is the one before it.
    items.slice(1).forEach((it, i) => expect(it.parentId).toBe(items[i].id));
  });
  it("the prompt window reads about its budget of a long thread, still finds the summary, and never starts mid-turn", async () => {
    const th = await t.db.thread.create({ data: { userId } });
    const items = await appendItems(
      t.db,
      th.id,
      Array.from({ length: 300 }, (_, i) => ({
        role: i % 2 ? ("assistant" as const) : ("user" as const),
        content: `message ${i} ` + "word ".repeat(i % 2 ? 40 : 10),
      })),
      { cipher: await threadCipher(t.db, th.id) },
    );
    const leaf = items.at(-1)!;
    const tokens = items.map((i) => i.tokens);
    // A summary through item 20: far behind a small budget's window.
    await t.db.summary.create({
      data: {
        threadId: th.id,
        version: 1,
        throughItemId: items[20].id,
        throughPosition: items[20].position,
        content: "Earlier: greetings.",
        tokens: 5,
      },
    });
    const budget = tokens.slice(-20).reduce((a, b) => a + b, 0) + 7; // not a turn boundary
    const ctx = await loadContext(t.db, th.id, leaf.id, {
      cipher: await threadCipher(t.db, th.id),
      budget,
      maxItems: 1000,
    });
    expect(ctx.summary?.content).toBe("Earlier: greetings.");
    expect(ctx.window[0].role).toBe("user");
    expect(ctx.window.at(-1)!.id).toBe(leaf.id);
    expect(ctx.historyTokens).toBeLessThanOrEqual(budget);
    // Without a summary the walk stops soon after the budget: the rest is never read.
    await t.db.summary.deleteMany({ where: { threadId: th.id } });
    const capped = await loadContext(t.db, th.id, leaf.id, {
      cipher: await threadCipher(t.db, th.id),
      budget,
      maxItems: 1000,
    });
    expect(capped.window.length + capped.unsummarized.length).toBeLessThan(30);
    expect(capped.window[0].role).toBe("user");
    expect(capped.unsummarized.length).toBeGreaterThan(0); // enough to know a summary is due
    // The summary job reads past the window, up to maxItems.
    const all = await loadContext(t.db, th.id, leaf.id, {
      cipher: await threadCipher(t.db, th.id),
      budget,
      maxItems: 1000,
      pastWindow: true,
    });
    expect(all.window.length + all.unsummarized.length).toBe(300);
  });
});
