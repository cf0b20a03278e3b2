// The user's ratings of answers come along with an import: ChatGPT's message_feedback.json (in the shapes real
// exports have, tests/fixtures/import/real/README.md) beside conversations.json in the zip, LibreChat's `feedback`
// and Open WebUI's `annotation` on the messages, Mnemo's export's `feedback` list. They land on the same answers,
// shown as given; nothing is learned from them, no admin count includes them, a second import adds nothing and
// keeps what the user has since changed.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { strToU8, zipSync } from "fflate";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext } from "@/lib/user-context";
import { importConversations } from "@/lib/import/run";
import { threadView } from "@/lib/chat/threads";
import { exportUserData } from "@/lib/account/export";
import { rateAnswer } from "@/lib/memory/feedback";
import { feedbackByModel } from "@/lib/admin/feedback-stats";
import { setEncryptionKeys } from "@/lib/crypto/content";
import { rowsContaining } from "@/testing/privacy-checks";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { connectToMock } from "@/testing/mock-connection";
import { startLearning } from "@/lib/import/learn";
import { runDueJobs } from "@/lib/jobs/worker";

const file = (name: string) => fs.readFileSync(path.join(__dirname, "fixtures/import", name));
const json = (name: string) => JSON.parse(file(name).toString("utf8"));

afterEach(() => setEncryptionKeys(undefined));

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());

describe.each(engines)("ratings that come with an import on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
    await connectToMock(t.db, mock.url, `fb-${engine}`);
  });
  afterAll(async () => t?.close());
  const newUser = async (name: string) =>
    (await t.db.user.create({ data: { email: `${name}-${engine}-${crypto.randomUUID()}@example.com` } })).id;

  /** Each shown answer's text (start) and the rating it shows. */
  const ratingsShown = async (userId: string) => {
    const out: Array<[string, number | null, string | null]> = [];
    const threads = await t.db.thread.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
    for (const th of threads) {
      const view = await threadView(await userContext(t.db, userId), th.id);
      for (const i of view.items)
        if (i.role === "assistant")
          out.push([i.content.slice(0, 24), i.feedback?.rating ?? null, i.feedback?.comment ?? null]);
    }
    return out;
  };

  it("ChatGPT: message_feedback.json in the zip, in every shape real exports use, lands on the rated answers", async () => {
    const user = await newUser("gpt-fb");
    const zip = zipSync({
      // Ahead of conversations.json in the zip: read aside, applied once the conversations are in.
      "message_feedback.json": file("real/chatgpt-message-feedback.json"),
      "conversations.json": file("chatgpt-conversations.json"),
      "user.json": strToU8("{}"),
    });
    const report = await importConversations(await userContext(t.db, user), [zip]);
    expect(report).toMatchObject({ format: "chatgpt", conversations: 1, feedback: { added: 3, unmatched: 2 } });

    const items = await t.db.item.findMany({ where: { userId: user }, select: { id: true, sourceRef: true } });
    const idOf = (ref: string) => items.find((i) => i.sourceRef === ref)!.id;
    const rows = await t.db.feedback.findMany({ where: { userId: user }, orderBy: { createdAt: "asc" } });
    const byItem = new Map(rows.map((r) => [r.itemId, r]));
    // The older shape: message_id, the conversation's id without hyphens, the words written.
    expect(byItem.get(idOf("a2"))).toMatchObject({ rating: 1, comment: "Exactly what I needed for the trip" });
    // The 2025 shape: "thumbs_down", reasons ticked before the words, the time it was given.
    expect(byItem.get(idOf("a3"))).toMatchObject({
      rating: -1,
      comment: "Not helpful, Not factually correct: Alfama is a neighbourhood, not a hotel",
      createdAt: new Date("2025-09-26T08:05:48.062Z"),
    });
    // Rated twice: the later rating counts.
    expect(byItem.get(idOf("a3b"))).toMatchObject({ rating: 1, comment: null });
    // Nothing is learned from them until the user asks to learn from the import: a plain 👍 (which teaches nothing)
    // is handled, the others wait, and no job is queued.
    expect(rows.map((r) => [r.rating, r.comment === null, r.processedAt === null])).toEqual([
      [1, true, false],
      [1, false, true],
      [-1, false, true],
    ]);
    expect(await t.db.job.count({ where: { userId: user, kind: "feedback" } })).toBe(0);

    // The thread shows them on the answers of the branch shown (a3b; a3 is on the other branch).
    expect(await ratingsShown(user)).toEqual([
      ["Max needs a microchip, a", 1, "Exactly what I needed for the trip"],
      ["Try pet-friendly chains ", 1, null],
    ]);

    // Another app's answers are no measure of the models here.
    const stats = await feedbackByModel(t.db);
    const ratedHere = stats.reduce((n, s) => n + s.up + s.down, 0);
    await t.db.feedback.updateMany({ where: { userId: user }, data: { createdAt: new Date() } });
    expect((await feedbackByModel(t.db)).reduce((n, s) => n + s.up + s.down, 0)).toBe(ratedHere);

    // Again: nothing added, and the rating the user has since changed here stays theirs.
    await rateAnswer(await userContext(t.db, user), { itemId: idOf("a2"), rating: -1, comment: "Not anymore" });
    const again = await importConversations(await userContext(t.db, user), [zip]);
    expect(again).toMatchObject({ conversations: 0, duplicates: 1, feedback: { added: 0, unmatched: 2 } });
    expect(await t.db.feedback.count({ where: { userId: user } })).toBe(3);
    expect(await t.db.feedback.findFirst({ where: { itemId: idOf("a2") } })).toMatchObject({ rating: -1 });
  });

  it("ChatGPT: message_feedback.json on its own, after conversations.json, rates what was imported; others' threads untouched", async () => {
    const user = await newUser("gpt-fb-alone");
    const other = await newUser("gpt-fb-other");
    // The other user has imported the same conversation: the ratings must not reach their answers.
    await importConversations(await userContext(t.db, other), [file("chatgpt-conversations.json")]);
    await importConversations(await userContext(t.db, user), [file("chatgpt-conversations.json")]);
    const report = await importConversations(await userContext(t.db, user), [
      file("real/chatgpt-message-feedback.json"),
    ]);
    expect(report).toMatchObject({ conversations: 0, feedback: { added: 3, unmatched: 2 } });
    expect(await t.db.feedback.count({ where: { userId: other } })).toBe(0);
    const otherItems = await t.db.item.findMany({ where: { userId: other }, select: { id: true } });
    expect(await t.db.feedback.count({ where: { itemId: { in: otherItems.map((i) => i.id) } } })).toBe(0);
  });

  it("LibreChat's `feedback` and Open WebUI's `annotation` on the messages come with their conversations", async () => {
    const user = await newUser("lc-owui-fb");
    const lc = json("real/librechat-messagesTree.json");
    const rate = (ms: Array<Record<string, unknown>>) => {
      for (const m of ms) {
        // LibreChat's current feedback: the rating, a tag (key and label) and the words written.
        if (m.messageId === "1f062c99-ff0a-4cf4-a1cf-7150261a24e2")
          m.feedback = {
            rating: "thumbsDown",
            tag: { key: "not_matched", label: "com_ui_feedback_tag_not_matched", direction: "thumbsDown" },
            text: "I only said lol",
          };
        if (m.messageId === "4c395510-fdfd-4556-b034-f9440f025e91") m.feedback = { rating: "thumbsUp" };
        rate((m.children as Array<Record<string, unknown>>) ?? []);
      }
    };
    rate(lc.messagesTree);
    const r1 = await importConversations(await userContext(t.db, user), [JSON.stringify(lc)]);
    expect(r1).toMatchObject({ format: "librechat", conversations: 1, feedback: { added: 2, unmatched: 0 } });

    const owui = json("real/openwebui-librechat-testdata.json");
    const answer = owui[0].chat.history.messages.ra2;
    answer.annotation = { rating: -1, reason: "Not factually correct", comment: "15 * 17 is 255", tags: [] };
    const r2 = await importConversations(await userContext(t.db, user), [JSON.stringify([owui[0]])]);
    expect(r2).toMatchObject({ format: "open-webui", conversations: 1, feedback: { added: 1 } });

    const shown = await ratingsShown(user);
    expect(shown).toContainEqual(["It looks like you're try", 1, null]);
    expect(shown).toContainEqual(["It looks like you might ", -1, "Not matched: I only said lol"]);
    expect(shown.filter((s) => s[1] === -1 && s[2] === "Not factually correct: 15 * 17 is 255")).toHaveLength(1);
  });

  it("asked to learn from the import, a 👎 with what was wrong teaches a lesson, as one given here would", async () => {
    const user = await newUser("gpt-fb-learn");
    const zip = zipSync({
      "conversations.json": file("chatgpt-conversations.json"),
      "message_feedback.json": file("real/chatgpt-message-feedback.json"),
    });
    await importConversations(await userContext(t.db, user), [zip]);
    mock.reset();
    mock.script({
      match: "Alfama is a neighbourhood, not a hotel",
      json: { lesson: { text: "Wants hotel suggestions to be actual hotels", kind: "preference" } },
    });
    mock.script({ match: "Feedback on an answer", json: { lesson: null }, times: 0 });
    await startLearning(t.db, user);
    // Two can teach (the 👎 with words, the 👍 with words), paced at the import learning's rate; a second start adds
    // no second job for either.
    await startLearning(t.db, user);
    const jobs = await t.db.job.findMany({ where: { userId: user, kind: "feedback" }, orderBy: { runAt: "asc" } });
    expect(jobs).toHaveLength(2);
    expect(jobs[1].runAt.getTime() - jobs[0].runAt.getTime()).toBeGreaterThanOrEqual(2_000);
    await t.db.job.updateMany({ where: { userId: user, kind: "feedback" }, data: { runAt: new Date(0) } });
    await t.db.job.updateMany({ where: { userId: user, kind: "import-learn" }, data: { status: "done" } });
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const lesson = await t.db.memory.findFirstOrThrow({ where: { userId: user, sourceFeedbackId: { not: null } } });
    expect(lesson.text).toBe("Wants hotel suggestions to be actual hotels");
    expect(await t.db.feedback.count({ where: { userId: user, processedAt: null } })).toBe(0);
  });

  it("Mnemo's export carries ratings and corrections into another account, sealed at rest; back into the same adds nothing", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    const from = await newUser("mnemo-fb-from");
    await importConversations(await userContext(t.db, from), [file("chatgpt-conversations.json")]);
    const answers = await t.db.item.findMany({
      where: { userId: from, role: "assistant" },
      orderBy: { position: "asc" },
    });
    await rateAnswer(await userContext(t.db, from), { itemId: answers[0].id, rating: -1, comment: "Max is a cat" });
    const thread = answers[0].threadId;
    const cf = await userContext(t.db, from);
    await t.db.feedback.create({
      data: {
        userId: from,
        threadId: thread,
        itemId: answers[1].id,
        kind: "correction",
        comment: cf.cipher.seal("No, I meant hotels that take large dogs"),
        processedAt: new Date(),
      },
    });
    let exported = "";
    for await (const chunk of exportUserData(cf)) exported += chunk;

    const to = await newUser("mnemo-fb-to");
    const report = await importConversations(await userContext(t.db, to), [exported]);
    expect(report).toMatchObject({ format: "mnemo", conversations: 1, feedback: { added: 2, unmatched: 0 } });
    const rows = await t.db.feedback.findMany({ where: { userId: to }, include: { item: true } });
    const ct = await userContext(t.db, to);
    const readable = rows.map((r) => [r.kind, r.rating, ct.cipher.open(r.comment!), ct.cipher.open(r.item.content)]);
    expect(readable).toContainEqual(["rating", -1, "Max is a cat", cf.cipher.open(answers[0].content)]);
    expect(readable).toContainEqual([
      "correction",
      null,
      "No, I meant hotels that take large dogs",
      cf.cipher.open(answers[1].content),
    ]);
    // The comments are sealed like the messages.
    expect(await rowsContaining(t.db, "Feedback", "Max is a cat")).toBe(0);

    const back = await importConversations(await userContext(t.db, from), [exported]);
    expect(back).toMatchObject({ conversations: 0, duplicates: 1, feedback: { added: 0, unmatched: 0 } });
    expect(await t.db.feedback.count({ where: { userId: from } })).toBe(2);
  });
});
