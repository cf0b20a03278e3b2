// Consolidation on a planted set, with the memory model's verdicts scripted:
// equal texts merge; "same" merges into the stronger memory; a contradiction
// between a learned and a stated memory goes to the stated one; two stated
// ones wait for the user, who settles them; look-alikes stay; old unused
// low-confidence memories expire; procedures are verified by 👍, marked by 👎
// and by age, and go into the prompt with a caveat.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { clearConnectionCache, resolveConnection, saveConnection, type ModelConnection } from "@/lib/llm/connection";
import { memoryHistory } from "@/lib/memory/long-term";
import { addMemory } from "@/lib/memory/store";
import { recordUses } from "@/lib/answer/settle";
import { candidatePairs, consolidateUser } from "@/lib/memory/consolidate";
import { listConflicts, settleConflict } from "@/lib/memory/conflicts";
import { rateAnswer } from "@/lib/memory/feedback";
import { appendItems } from "@/lib/memory/session";
import { createThread } from "@/lib/chat/threads";
import { memoryBlock, recall } from "@/lib/memory/recall";
import { markStaleProcedures, parseSteps, procedureText } from "@/lib/memory/procedures";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

describe.each(engines)("memory consolidation on %s", (engine) => {
  let t: TestDb;
  let conn: ModelConnection;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `cons-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
    const s = await resolveConnection(t.db);
    if (!s.configured) throw new Error("no connection");
    conn = s.connection;
  });
  afterAll(async () => t?.close());
  const newUser = async () => (await t.db.user.create({ data: { email: `cons-${engine}-${n++}@example.com` } })).id;
  const add = async (userId: string, text: string, source: "explicit" | "manual" | "inferred", extra: object = {}) =>
    addMemory(
      await userContext(t.db, userId),
      { text, source, ...extra },
      source === "inferred" ? "model" : "user",
      "planted",
    );
  const active = async (userId: string) =>
    (await t.db.memory.findMany({ where: { userId, status: "active" }, orderBy: { createdAt: "asc" } })).map(
      (m) => m.text,
    );

  it("merges, settles by precedence, leaves look-alikes, asks the user about two stated facts, expires low-value memories", async () => {
    const user = await newUser();
    await add(user, "Lives in Lisbon", "explicit");
    await add(user, "Lives in Porto", "explicit");
    await add(user, "Works as a nurse", "explicit");
    await add(user, "Works as a nurse at a hospital", "inferred");
    await add(user, "Likes dark roast coffee", "inferred");
    await add(user, "Dislikes dark roast coffee", "manual");
    await add(user, "Sister lives in Porto", "inferred");
    await add(user, "Brother lives in Porto", "inferred");
    const stale = await add(user, "Maybe likes jazz", "inferred", { confidence: 0.3 });
    await t.db.memory.update({ where: { id: stale.id }, data: { createdAt: new Date(Date.now() - 200 * 86_400_000) } });
    // Given to the model with an answer that did not draw on it: still never used, so still low-value.
    await recordUses(t.db, user, "an-answer", [stale.id], []);
    // Equal text but for case and punctuation (e.g. from an import): merged without the model.
    const dup = await t.db.memory.create({ data: { userId: user, text: "works as a nurse!", source: "inferred" } });

    const texts = (await t.db.memory.findMany({ where: { userId: user, status: "active" } })).map((m) => m.text);
    const pairs = candidatePairs(
      (await t.db.memory.findMany({ where: { userId: user, status: "active" } })).map((m) => ({
        ...m,
        kind: m.kind,
        embedding: null,
      })),
      new Map(),
      new Date(-1),
      null,
    ).pairs.map(([a, b]) => [a.text, b.text].sort().join(" / "));
    for (const expected of [
      "Lives in Lisbon / Lives in Porto",
      "Dislikes dark roast coffee / Likes dark roast coffee",
      "Works as a nurse / Works as a nurse at a hospital",
    ]) {
      expect(pairs, `the pair finder proposes ${expected}`).toContain(expected);
    }
    expect(texts).toHaveLength(10);

    // The judge, as a real memory model would answer (by content, whatever order the pairs come in).
    const verdict = (a: string, b: string) => {
      const k = [a, b].sort().join(" / ");
      if (k === "Lives in Lisbon / Lives in Porto") return "conflict";
      if (k === "Dislikes dark roast coffee / Likes dark roast coffee") return "conflict";
      if (k === "Works as a nurse / Works as a nurse at a hospital") return "same";
      return "different";
    };
    const judge = async () => {
      // The run merges the equal-text copy before it asks, so the pairs it sends leave that one out.
      const pending = (
        await t.db.memory.findMany({
          where: { userId: user, status: "active", id: { not: dup.id } },
          orderBy: { createdAt: "asc" },
        })
      ).map((m) => ({ ...m, embedding: null }));
      const list = candidatePairs(pending, new Map(pending.map((m) => [m.id, m.createdAt])), new Date(0), null).pairs;
      mock.script({
        match: "Pairs:",
        json: { verdicts: list.map(([a, b], i) => ({ pair: i, verdict: verdict(a.text, b.text) })) },
      });
    };
    await judge();
    const counts = await consolidateUser(await userContext(t.db, user), conn);
    expect(counts).toMatchObject({
      merged: 2,
      contradictionsSettled: 1,
      conflictsForUser: 1,
      expired: 1,
      modelCalls: 1,
    });
    expect(await active(user)).toEqual([
      "Lives in Lisbon",
      "Lives in Porto",
      "Works as a nurse",
      "Dislikes dark roast coffee",
      "Sister lives in Porto",
      "Brother lives in Porto",
    ]);
    // The loser's history names the winner.
    const coffee = await t.db.memory.findFirstOrThrow({
      where: { userId: user, text: "Likes dark roast coffee" },
      include: { versions: true },
    });
    // Learned before the memory that contradicts it: kept as past (true until that one), not hidden.
    expect(coffee.status).toBe("past");
    expect((await memoryHistory(await userContext(t.db, user), coffee.id))[0].reason).toBe(
      "Contradicted by a memory that takes precedence: Dislikes dark roast coffee",
    );
    const jazz = await t.db.memory.findFirstOrThrow({ where: { id: stale.id }, include: { versions: true } });
    expect(jazz.versions.at(-1)?.reason).toMatch(/^Expired: learned with low confidence and never used/);

    // The user settles the conflict: Porto is true now.
    const [conflict] = await listConflicts(await userContext(t.db, user));
    expect([conflict.a.text, conflict.b.text]).toEqual(["Lives in Lisbon", "Lives in Porto"]);
    await settleConflict(t.db, user, { memoryId: conflict.b.id, otherId: conflict.a.id, keep: "memory" });
    expect(await listConflicts(await userContext(t.db, user))).toEqual([]);
    const lisbon = await t.db.memory.findUniqueOrThrow({ where: { id: conflict.a.id }, include: { versions: true } });
    // Lisbon was true until Porto was learned: closed, recalled for questions about the past.
    expect(lisbon).toMatchObject({ status: "past", supersededById: conflict.b.id });
    expect(lisbon.validUntil).toEqual(
      (await t.db.memory.findUniqueOrThrow({ where: { id: conflict.b.id } })).createdAt,
    );
    expect(lisbon.versions.at(-1)).toMatchObject({
      actor: "user",
      reason: `You chose the other memory as true now (memory ${conflict.b.id})`, // no user text at rest
    });
    const history = await memoryHistory(await userContext(t.db, user), conflict.a.id);
    expect(history[0].reason).toBe("You chose the other memory as true now: Lives in Porto"); // read back in words

    // A second run judges nothing new: no model call.
    mock.reset();
    const again = await consolidateUser(await userContext(t.db, user), conn);
    expect(again).toMatchObject({ merged: 0, contradictionsSettled: 0, conflictsForUser: 0, modelCalls: 0 });
    expect(mock.chatRequests()).toHaveLength(0);
  });

  it("a merge keeps what the user said of either copy: don't mention it, private, pinned", async () => {
    const user = await newUser();
    // The user said "don't mention this" of one copy, "private" and pinned of another; the copy the merge keeps (the
    // user stated it) carries neither.
    const kept = await add(user, "Has type 1 diabetes", "explicit");
    await t.db.memory.create({ data: { userId: user, text: "has type 1 diabetes.", source: "inferred", muted: true } });
    await t.db.memory.create({
      data: { userId: user, text: "Has Type 1 Diabetes", source: "manual", private: true, pinned: true },
    });
    await consolidateUser(await userContext(t.db, user), null);
    const left = await t.db.memory.findMany({ where: { userId: user, status: "active" } });
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ id: kept.id, muted: true, private: true, pinned: true });
    const block = memoryBlock(await recall(await userContext(t.db, user), "do I have diabetes?", { budget: 1000 }));
    expect(block ?? "").not.toMatch(/diabetes/i);
  });

  it("a memory whose time ran out ('remember this for a week') is not sent to the memory model", async () => {
    const user = await newUser();
    await add(user, "Is staying at the Hotel Avenida in Lisbon", "explicit", {
      expiresAt: new Date(Date.now() - 86_400_000),
    });
    await add(user, "Is staying at the Hotel Avenida for a conference", "explicit");
    await add(user, "Is staying at the Hotel Avenida with colleagues", "explicit");
    await consolidateUser(await userContext(t.db, user), conn);
    const sent = mock.requests.map((r) => JSON.stringify(r.body)).join("\n");
    // The two current ones were judged (the run did reach the model), the expired one never left.
    expect(sent).toContain("with colleagues");
    expect(sent).not.toContain("in Lisbon");
  });

  it("a small model's sloppy verdicts (any case, a number as text, one unreadable) still settle what they can", async () => {
    const user = await newUser();
    const lisbon = await add(user, "Lives in Lisbon", "explicit");
    const porto = await add(user, "Lives in Porto", "inferred");
    mock.script({
      match: "Pairs:",
      json: { verdicts: [{ pair: "0", verdict: "Conflict" }, { pair: 1, verdict: "maybe?" }, { verdict: "same" }] },
    });
    await consolidateUser(await userContext(t.db, user), conn);
    // The stated memory wins the conflict, the learned one is archived: the readable verdict was acted on.
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: lisbon.id } })).toMatchObject({ status: "active" });
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: porto.id } })).toMatchObject({ status: "archived" });
  });

  it("a memory the user deletes while the model judges it: no half-marked conflict, the run goes on", async () => {
    const user = await newUser();
    const lisbon = await add(user, "Lives in Lisbon", "explicit");
    const porto = await add(user, "Lives in Porto", "explicit");
    // The verdict arrives after the user deleted one side (the request waits; the delete runs meanwhile).
    mock.script({ match: "Pairs:", json: { verdicts: [{ pair: 0, verdict: "conflict" }] }, delayMs: 300 });
    let deleted: Promise<unknown> | undefined;
    mock.onRequest = (r) => {
      if (JSON.stringify(r.body).includes("Pairs:"))
        // .then(): a Prisma query runs only once something waits on it.
        deleted = t.db.memory.delete({ where: { id: porto.id } }).then(() => undefined);
    };
    try {
      const counts = await consolidateUser(await userContext(t.db, user), conn);
      expect(deleted).toBeDefined();
      await deleted;
      expect(counts).toMatchObject({ conflictsForUser: 0, modelCalls: 1 });
    } finally {
      mock.onRequest = undefined;
    }
    const left = await t.db.memory.findUniqueOrThrow({ where: { id: lisbon.id } });
    expect(left).toMatchObject({ status: "active", conflictWithId: null });
    expect(await listConflicts(await userContext(t.db, user))).toEqual([]);
  });

  it("procedures: steps kept, verified by 👍, marked by 👎 and by age, sent with a caveat", async () => {
    const user = await newUser();
    const text = procedureText("Deploying the blog", ["Run the tests", "Build the site", "Upload to the server"]);
    expect(text).toBe("Deploying the blog: 1. Run the tests; 2. Build the site; 3. Upload to the server");
    expect(parseSteps(text)).toEqual(["Run the tests", "Build the site", "Upload to the server"]);
    const p = await add(user, text, "inferred", { kind: "procedure", steps: parseSteps(text) });
    const thread = await createThread(await userContext(t.db, user));
    const [, answer] = await appendItems(
      t.db,
      thread.id,
      [
        { role: "user", content: "How do I deploy the blog?" },
        { role: "assistant", content: "Run the tests, build, upload." },
      ],
      { cipher: await threadCipher(t.db, thread.id) },
    );
    await recordUses(t.db, user, answer.id, [p.id]);

    await rateAnswer(await userContext(t.db, user), { itemId: answer.id, rating: 1 });
    const m = await t.db.memory.findUniqueOrThrow({ where: { id: p.id } });
    expect(m.verifiedAt).not.toBeNull();
    expect(m.needsRevalidation).toBe(false);
    expect(m.steps).toEqual(["Run the tests", "Build the site", "Upload to the server"]);

    await rateAnswer(await userContext(t.db, user), {
      itemId: answer.id,
      rating: -1,
      comment: "the upload step is wrong now",
    });
    const marked = await t.db.memory.findUniqueOrThrow({ where: { id: p.id }, include: { versions: true } });
    expect(marked.needsRevalidation).toBe(true);
    expect(marked.versions.map((v) => v.reason)).toContain(
      "Needs re-validation: an answer that followed it was rated bad",
    );
    const r = await recall(await userContext(t.db, user), "deploy the blog", { budget: 800 });
    expect(memoryBlock(r)).toContain("not verified recently: confirm with the user before relying on it");

    // Verified again, then not for longer than the window: marked by age.
    await rateAnswer(await userContext(t.db, user), { itemId: answer.id, rating: 1 });
    await t.db.memory.update({ where: { id: p.id }, data: { verifiedAt: new Date(Date.now() - 100 * 86_400_000) } });
    expect(await markStaleProcedures(t.db, 90, user)).toBe(1);
    expect((await t.db.memory.findUniqueOrThrow({ where: { id: p.id } })).needsRevalidation).toBe(true);
  });

  it("a run judges a bounded share of pairs and the next one goes on from there, judging no pair twice", async () => {
    const base = Date.UTC(2026, 0, 1);
    const rows = ["red", "green", "blue", "amber"].map((c, i) => ({
      id: `m${i}`,
      text: `Likes ${c} tea`,
      kind: "preference",
      source: "inferred" as const,
      pinned: false,
      verifiedAt: null,
      createdAt: new Date(base + i * 1000),
      updatedAt: new Date(base + i * 1000),
      embedding: null,
      embeddingModel: null,
    }));
    const at = new Map(rows.map((r) => [r.id, r.createdAt]));
    const first = candidatePairs(rows, at, new Date(0), null, 3);
    // Each pair once, when its later member is processed: m1 with m0, then m2 with m0 and m1; m3 waits.
    expect(first.pairs.map(([a, b]) => `${a.id}-${b.id}`)).toEqual(["m1-m0", "m2-m0", "m2-m1"]);
    expect(first).toMatchObject({ complete: false, through: rows[2].createdAt });
    const second = candidatePairs(rows, at, first.through!, null, 3);
    expect(second.pairs.map(([a, b]) => `${a.id}-${b.id}`)).toEqual(["m3-m0", "m3-m1", "m3-m2"]);
    expect(second.complete).toBe(true);
    // m1 is re-worded later: it is judged again against the others, and only it.
    at.set("m1", new Date(base + 10_000));
    expect(candidatePairs(rows, at, rows[3].createdAt, null, 2).pairs.map(([a, b]) => `${a.id}-${b.id}`)).toEqual([
      "m1-m0",
      "m1-m2",
      "m1-m3",
    ]);
  });
});
