// Conversation import: each format's published export shape becomes Mnemo
// threads with their branches, original dates and active branch; a second
// import adds nothing; a broken file keeps what came before the break;
// Mnemo's own export round-trips into another account; imported text is
// sealed at rest and recalled with its date.
import crypto from "node:crypto";
import { openAttachment } from "@/lib/attachments/store";
import { searchMessages } from "@/lib/chat/search";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { importConversations } from "@/lib/import/run";
import { threadView, listThreads } from "@/lib/chat/threads";
import { exportUserData } from "@/lib/account/export";
import { listMemories } from "@/lib/memory/long-term";
import { addMemory } from "@/lib/memory/store";
import { setEncryptionKeys } from "@/lib/crypto/content";
import { recall } from "@/lib/memory/recall";
import { runTurn } from "@/lib/chat/turn";
import { rowsContaining } from "@/testing/privacy-checks";
import { PrismaSession, appendItems } from "@/lib/memory/session";
import { strToU8, zipSync } from "fflate";
import { learnFromImports, learnPlan, startLearning } from "@/lib/import/learn";
import { importMemoryList } from "@/lib/memory/portable";
import { clearConnectionCache, resolveConnection, saveConnection, type ModelConnection } from "@/lib/llm/connection";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";

const fixture = (name: string) =>
  fs.createReadStream(path.join(__dirname, "fixtures/import", name), { highWaterMark: 97 }); // small chunks: values split across reads

afterEach(() => setEncryptionKeys(undefined));

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());

describe.each(engines)("conversation import on %s", (engine) => {
  let t: TestDb;
  let conn: ModelConnection;
  beforeAll(async () => {
    t = await createTestDb(engine);
    const admin = await t.db.user.create({ data: { email: `import-admin-${engine}@example.com`, role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
    clearConnectionCache(t.db);
    const state = await resolveConnection(t.db);
    if (!state.configured) throw new Error("no model connection");
    conn = state.connection;
  });
  afterAll(async () => t?.close());
  const newUser = async (name: string) =>
    (await t.db.user.create({ data: { email: `${name}-${engine}-${crypto.randomUUID()}@example.com` } })).id;
  const threadsOf = (userId: string) => t.db.thread.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });

  it("a pasted document of 400,000 characters comes in whole; past a million it is cut, and says so", async () => {
    const user = await newUser("long");
    const sentence = (i: number) => `Clause ${i} of the lease sets out what the tenant owes each month. `;
    const doc = Array.from({ length: 7000 }, (_, i) => sentence(i)).join("") + "The last clause names the pelican.";
    const book = "Chapter text goes on and on. ".repeat(40_000) + "A tail nobody keeps.";
    const chat = (id: string, name: string, text: string) => ({
      uuid: id,
      name,
      created_at: "2024-05-02T09:15:00Z",
      chat_messages: [
        { uuid: `${id}-q`, sender: "human", text, created_at: "2024-05-02T09:15:00Z" },
        { uuid: `${id}-a`, sender: "assistant", text: "Read it.", created_at: "2024-05-02T09:16:00Z" },
      ],
    });
    // A conversation of eleven such documents: ten whole, then the budget of a conversation is spent.
    const shelf = {
      ...chat("shelf", "Shelf", "Here come my notes."),
      chat_messages: Array.from({ length: 11 }, (_, i) => ({
        uuid: `shelf-${i}`,
        sender: i % 2 ? "assistant" : "human",
        text: `Volume ${i}. ${"Notes on the garden and its pond. ".repeat(30_000)}`.slice(0, 1_000_000),
        created_at: "2024-05-02T09:15:00Z",
      })),
    };
    const file = JSON.stringify([chat("lease", "Lease", doc), chat("book", "Book", book), shelf]);
    const report = await importConversations(await userContext(t.db, user), [file]);
    expect(report).toMatchObject({ conversations: 3 });
    const shelved = await t.db.thread.findFirstOrThrow({ where: { userId: user, title: "Shelf" } });
    const volumes = (await threadView(await userContext(t.db, user), shelved.id)).items.map((i) => i.content);
    expect(volumes.slice(0, 10).every((v) => v.length === 1_000_000)).toBe(true);
    expect(volumes[10]).toMatch(/^Volume 10\./);
    expect(volumes[10]).toMatch(/\[cut at 100,000 characters on import\]$/);
    const [lease, novel] = await Promise.all(
      ["Lease", "Book"].map(async (title) => {
        const thread = await t.db.thread.findFirstOrThrow({ where: { userId: user, title } });
        return (await threadView(await userContext(t.db, user), thread.id)).items[0].content;
      }),
    );
    expect(doc.length).toBeGreaterThan(400_000);
    expect(lease).toBe(doc);
    expect(novel.length).toBeLessThan(1_000_100);
    expect(novel).toMatch(/\[cut at 1,000,000 characters on import\]$/);
    // Recalled by a word of its start, as an excerpt that says the message goes on.
    const r = await recall(await userContext(t.db, user), "What does clause 12 of the lease say?", { budget: 400 });
    const line = r.passages.flatMap((p) => p.lines).find((l) => l.includes("Clause 12 "));
    expect(line).toMatch(/…$/);
    expect(line!.length).toBeLessThan(3000);
    // Going on in the imported thread: the document does not flood the prompt (history is kept within its budget).
    const thread = await t.db.thread.findFirstOrThrow({ where: { userId: user, title: "Lease" } });
    mock.script({ content: "It names the pelican." });
    for await (const e of runTurn(t.db, user, { kind: "send", threadId: thread.id, content: "And the last clause?" }))
      expect(e.type).not.toBe("error");
    const sent = JSON.stringify(mock.chatRequests().at(-1)!.body);
    expect(sent).toContain("And the last clause?");
    expect(sent.length).toBeLessThan(60_000);
  });

  it("ChatGPT: the mapping tree, current_node, dates, hidden messages, tool notes, citations; again adds nothing", async () => {
    const user = await newUser("gpt");
    const report = await importConversations(await userContext(t.db, user), fixture("chatgpt-conversations.json"));
    expect(report).toMatchObject({ format: "chatgpt", conversations: 1, messages: 8, branches: 1, duplicates: 0 });
    expect(report.skipped).toEqual({
      count: 1,
      reasons: [{ reason: "empty conversation (no messages)", count: 1, examples: ["Empty chat"] }],
    });

    const [thread] = await threadsOf(user);
    expect(thread).toMatchObject({ importSource: "chatgpt", title: "Trip to Lisbon" });
    expect(thread.createdAt.toISOString()).toBe("2024-03-01T08:00:00.123Z");
    const view = await threadView(await userContext(t.db, user), thread.id);
    expect(view.items.map((i) => [i.role, i.content.slice(0, 30)])).toEqual([
      ["user", "[image not imported]\n\nI'm flyi"],
      ["tool", 'Call: ```\nsearch("EU pet passp'],
      ["tool", "Pet travel rules\n\nEU pet passp"],
      ["assistant", "Max needs a microchip, a rabie"],
      ["user", "Which hotels in Lisbon allow l"],
      ["assistant", "Try pet-friendly chains such a"],
    ]);
    expect(view.items[3].content).toContain("Sources:\n1. Pet travel — https://example.org/pets");
    expect(view.items[3].model).toBe("gpt-4o");
    expect(view.items[0].createdAt.toISOString()).toBe("2024-03-01T08:00:00.200Z");
    expect(view.items[0].sourceRef).toBe("u1");
    // The edited question is the other branch, with its interrupted answer kept as interrupted.
    const other = await t.db.item.findMany({
      where: { threadId: thread.id, sourceRef: { in: ["u2", "a3"] } },
      orderBy: { position: "asc" },
    });
    expect(other.map((i) => [i.sourceRef, i.status])).toEqual([
      ["u2", "complete"],
      ["a3", "interrupted"],
    ]);
    expect(
      (await t.db.item.findMany({ where: { threadId: thread.id } })).some((i) => /nurse|Be brief/.test(i.content)),
    ).toBe(false);

    const again = await importConversations(await userContext(t.db, user), fixture("chatgpt-conversations.json"));
    expect(again).toMatchObject({ conversations: 0, messages: 0, duplicates: 1 });
    expect(await t.db.thread.count({ where: { userId: user } })).toBe(1);
    // Searchable by title, and recalled with the original date.
    expect((await listThreads(await userContext(t.db, user), { q: "lisbon" })).threads.map((x) => x.id)).toEqual([
      thread.id,
    ]);
    const r = await recall(await userContext(t.db, user), "What does my golden retriever need for the flight?", {
      budget: 1000,
    });
    const passage = r.passages.find((p) => p.lines.join(" ").includes("golden retriever"));
    expect(passage?.date.toISOString().slice(0, 10)).toBe("2024-03-01");
  });

  it("Claude: attachment text kept, binary files noted, thinking left out", async () => {
    const user = await newUser("claude");
    const report = await importConversations(await userContext(t.db, user), fixture("claude-conversations.json"));
    expect(report).toMatchObject({ format: "claude", conversations: 1, messages: 2, branches: 0 });
    const [thread] = await threadsOf(user);
    const view = await threadView(await userContext(t.db, user), thread.id);
    // The file's text comes in as the message's attachment, not as pasted text.
    expect(view.items[0].content).not.toContain("Cast on 64 stitches");
    expect(view.items[0].attachments.map((a) => a.name)).toEqual(["pattern.txt"]);
    const file = await openAttachment(await userContext(t.db, user), view.items[0].attachments[0].id);
    expect(file.text).toContain("Cast on 64 stitches");
    // and its words are found by the message search, as an upload's are.
    const found = await searchMessages(await userContext(t.db, user), { q: "cast stitches" });
    expect(found.hits.map((h) => [h.itemId, h.file?.name])).toEqual([[view.items[0].id, "pattern.txt"]]);
    expect(view.items[0].content).toContain(
      "[File photo-of-sweater.jpg not imported: binary files are not in the export]",
    );
    expect(view.items[1].content).toBe("64 stitches divide evenly by 4, so the 2x2 rib works.");
    expect(thread.createdAt.toISOString()).toBe("2024-05-02T09:15:00.000Z");
  });

  it("Open WebUI keeps both answers with the current one shown; LibreChat's nested export is flattened", async () => {
    const user = await newUser("owui");
    expect(await importConversations(await userContext(t.db, user), fixture("open-webui-export.json"))).toMatchObject({
      format: "open-webui",
      conversations: 1,
      messages: 3,
      branches: 1,
    });
    expect(await importConversations(await userContext(t.db, user), fixture("librechat-export.json"))).toMatchObject({
      format: "librechat",
      conversations: 1,
      messages: 2,
    });
    const [owui, lc] = await threadsOf(user);
    expect((await threadView(await userContext(t.db, user), owui.id)).items.map((i) => i.content)).toEqual([
      "How often should I feed my sourdough starter?",
      "Daily at room temperature, weekly in the fridge.",
    ]);
    const lcItems = (await threadView(await userContext(t.db, user), lc.id)).items;
    expect(lcItems.map((i) => [i.role, i.content])).toEqual([
      ["user", "I'm training for the Berlin marathon in September."],
      ["assistant", "Great goal! Build up your long runs gradually."],
    ]);
    expect(lc.importSource).toBe("librechat");
  });

  it("a NUL or a broken character in an id or a model name loses nothing: the conversation comes in whole", async () => {
    const user = await newUser("nul");
    const file = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures/import/open-webui-export.json"), "utf8"));
    type Message = { id: string; parentId: string | null; childrenIds: string[]; model?: string };
    const messages: Record<string, Message> = file[0].chat.history.messages;
    // The question's id (and every reference to it) and each model name get a NUL and a lone surrogate.
    const bad = "q1\u0000\ud800";
    const renamed = Object.fromEntries(
      Object.entries(messages).map(([id, m]) => [
        id === "q1" ? bad : id,
        {
          ...m,
          id: m.id === "q1" ? bad : m.id,
          parentId: m.parentId === "q1" ? bad : m.parentId,
          ...(m.model ? { model: `${m.model}\u0000\ud800` } : {}),
        },
      ]),
    );
    const mutated = [
      { ...file[0], chat: { ...file[0].chat, history: { ...file[0].chat.history, messages: renamed } } },
    ];
    const report = await importConversations(await userContext(t.db, user), [JSON.stringify(mutated)]);
    expect(report).toMatchObject({ conversations: 1, messages: 3, skipped: { count: 0 } });
  });

  it("the export zip as ChatGPT sends it: conversations.json read from inside, other files skipped; a zip without it is refused", async () => {
    const user = await newUser("zip");
    const json = fs.readFileSync(path.join(__dirname, "fixtures/import", "chatgpt-conversations.json"));
    const zip = zipSync({
      "chat.html": strToU8("<html></html>"),
      "file-abc.png": new Uint8Array(5000).fill(7),
      "conversations.json": json,
    });
    const pieces = Array.from({ length: Math.ceil(zip.length / 1000) }, (_, i) =>
      zip.subarray(i * 1000, (i + 1) * 1000),
    );
    expect(await importConversations(await userContext(t.db, user), pieces)).toMatchObject({
      format: "chatgpt",
      conversations: 1,
      messages: 8,
      branches: 1,
    });
    await expect(
      importConversations(await userContext(t.db, user), [zipSync({ "user.json": strToU8("{}") })]),
    ).rejects.toThrow(/no conversations.json/);
    await expect(
      importConversations(await userContext(t.db, user), [zip.subarray(0, zip.length - 400)]),
    ).rejects.toThrow(/damaged or cut short|no conversations.json|valid JSON/);
  });

  it("a file cut off part of the way keeps the conversations before the break; a file that is not JSON is refused", async () => {
    const user = await newUser("broken");
    const report = await importConversations(await userContext(t.db, user), fixture("truncated-chatgpt.json"));
    expect(report.conversations).toBe(1);
    expect(report.error).toMatch(/stops being valid JSON part of the way through/);
    await expect(importConversations(await userContext(t.db, user), ["hello, this is a text file"])).rejects.toThrow(
      /not a conversation export/,
    );
    await expect(importConversations(await userContext(t.db, user), ['{"just": "an object"}'])).resolves.toMatchObject({
      conversations: 0,
      skipped: { count: 1, reasons: [{ reason: expect.stringMatching(/^not a conversation from ChatGPT/) }] },
    });
    expect(await t.db.thread.count({ where: { userId: user } })).toBe(1);
  });

  it("Mnemo's own export round-trips into a new account: threads, branches, tool calls and memories; again adds nothing", async () => {
    const a = await newUser("source");
    await importConversations(await userContext(t.db, a), fixture("chatgpt-conversations.json"));
    const extra = await t.db.thread.create({ data: { userId: a, title: "Native thread" } });
    const session = new PrismaSession(t.db, extra.id, await threadCipher(t.db, extra.id));
    await session.addItems([
      { role: "user", content: "Remember that I like tea" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call_1", name: "remember", arguments: '{"text":"Likes tea"}' }],
      },
      { role: "tool", content: "Saved.", toolCallId: "call_1", toolName: "remember" },
      { role: "assistant", content: "Noted." },
    ]);
    await addMemory(await userContext(t.db, a), { text: "Likes tea", source: "explicit" }, "user", "test");

    const b = await newUser("target");
    const report = await importConversations(await userContext(t.db, b), exportUserData(await userContext(t.db, a)));
    expect(report).toMatchObject({
      format: "mnemo",
      conversations: 2,
      messages: 12,
      branches: 1,
      // Likes tea, and the two custom instructions the ChatGPT file brought (still waiting for review).
      memories: { added: 3, skipped: 0 },
    });
    expect(await t.db.memory.count({ where: { userId: b, status: "pending" } })).toBe(2);
    const threads = await threadsOf(b);
    const copy = threads.find((x) => x.title === "Native thread")!;
    const items = (await threadView(await userContext(t.db, b), copy.id)).items;
    expect(items.map((i) => i.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(items[1].toolCalls).toEqual([{ id: "call_1", name: "remember", arguments: '{"text":"Likes tea"}' }]);
    expect(items[2].toolCallId).toBe("call_1");
    const lisbon = threads.find((x) => x.title === "Trip to Lisbon")!;
    expect((await threadView(await userContext(t.db, b), lisbon.id)).items.at(-1)?.content).toMatch(
      /^Try pet-friendly/,
    );
    expect((await listMemories(await userContext(t.db, b), { status: "active" })).map((m) => m.text)).toEqual([
      "Likes tea",
    ]);

    expect(
      await importConversations(await userContext(t.db, b), exportUserData(await userContext(t.db, a))),
    ).toMatchObject({
      conversations: 0,
      duplicates: 2,
      memories: { added: 0 },
    });
    // Importing an account's export into itself adds nothing either.
    expect(
      await importConversations(await userContext(t.db, a), exportUserData(await userContext(t.db, a))),
    ).toMatchObject({
      conversations: 0,
      duplicates: 2,
    });
  });

  it("with encryption at rest, imported text is sealed in the tables and plain to its owner", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    const user = await newUser("sealed");
    const before = [
      await rowsContaining(t.db, "Item", "check the stitch count"),
      await rowsContaining(t.db, "Attachment", "Cast on 64 stitches"),
      await rowsContaining(t.db, "Attachment", "pattern.txt"),
      await rowsContaining(t.db, "Thread", "Knitting pattern"),
    ];
    await importConversations(await userContext(t.db, user), fixture("claude-conversations.json"));
    // Other tests imported the same file in plain text: the count must not grow.
    expect([
      await rowsContaining(t.db, "Item", "check the stitch count"),
      await rowsContaining(t.db, "Attachment", "Cast on 64 stitches"),
      await rowsContaining(t.db, "Attachment", "pattern.txt"),
      await rowsContaining(t.db, "Thread", "Knitting pattern"),
    ]).toEqual(before);
    const [thread] = await threadsOf(user);
    const u = await userContext(t.db, user);
    const [first] = (await threadView(u, thread.id)).items;
    expect(first.content).toContain("check the stitch count");
    expect((await openAttachment(u, first.attachments[0].id)).text).toContain("Cast on 64 stitches");
  });

  it("learning from imported history: the plan counts the calls, each exchange is read once into the review queue, a minute's share at a time", async () => {
    const user = await newUser("learn");
    await importConversations(await userContext(t.db, user), fixture("chatgpt-conversations.json"));
    // Two exchanges: the first question (its answer comes after the browsing notes) and the edited one; the
    // interrupted answer is not an exchange.
    expect(await learnPlan(t.db, user)).toMatchObject({ threads: 1, done: 0, remaining: 2, running: false });
    mock.reset();
    mock.script(
      {
        match: "golden retriever",
        json: { decisions: [{ op: "ADD", text: "Has a golden retriever named Max", kind: "fact" }] },
      },
      { json: { decisions: [] }, times: 0 },
    );
    await startLearning(t.db, user);
    expect((await learnPlan(t.db, user)).running).toBe(true);
    expect(await learnFromImports(await userContext(t.db, user), conn, { perRun: 1 })).toEqual({ read: 1, left: true });
    const next = await t.db.job.findFirst({
      where: { userId: user, kind: "import-learn", status: "queued", runAt: { gt: new Date(Date.now() + 30_000) } },
    });
    expect(next, "the next share waits a minute").not.toBeNull();
    const [m] = await t.db.memory.findMany({ where: { userId: user, source: "inferred" } });
    expect(m).toMatchObject({ text: "Has a golden retriever named Max", status: "pending", source: "inferred" });
    const said = await t.db.item.findUnique({ where: { id: m.sourceItemId! } });
    expect(said?.sourceRef).toBe("u1");
    const asked = JSON.stringify(mock.chatRequests()[0].body);
    expect(asked).toContain("Max needs a microchip"); // the answer past the tool notes
    // Old history is dated by when it was said: the memory model counts relative dates from that day, and the
    // memory is true since then, not since the import.
    expect(said!.createdAt.getTime()).toBeLessThan(Date.now() - 86_400_000);
    const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeZone: "UTC" }).format(said!.createdAt);
    expect(asked).toContain(`Date of the exchange: ${day}`);
    expect(m.validFrom).toEqual(said!.createdAt);

    // The model fails: the exchange is given back, and read on the retry.
    mock.reset();
    mock.script({ status: 500, times: 2 }); // the SDK's one retry fails too
    await expect(learnFromImports(await userContext(t.db, user), conn, { perRun: 1 })).rejects.toThrow();
    expect(await learnPlan(t.db, user)).toMatchObject({ done: 1, remaining: 1 });
    mock.script({ json: { decisions: [] }, times: 0 });
    expect(await learnFromImports(await userContext(t.db, user), conn, { perRun: 1 })).toEqual({ read: 1, left: true });
    expect(await learnFromImports(await userContext(t.db, user), conn, { perRun: 1 })).toEqual({
      read: 0,
      left: false,
    });
    expect(await learnPlan(t.db, user)).toMatchObject({ done: 2, remaining: 0, running: false });
    expect(
      mock.chatRequests().filter((r) => JSON.stringify(r.body).includes("Which hotels in Lisbon allow large dogs")),
    ).toHaveLength(3); // the failed call, its retry, the read

    // Paused learning reads nothing.
    await importConversations(await userContext(t.db, user), fixture("claude-conversations.json"));
    await startLearning(t.db, user);
    await t.db.user.update({ where: { id: user }, data: { memoryPaused: true } });
    expect(await learnFromImports(await userContext(t.db, user), conn)).toEqual({ read: 0, left: false });
    expect((await learnPlan(t.db, user)).remaining).toBe(1);
  });

  it("a start while a run is finishing, or just after it, still gets a job; a double click does not get two", async () => {
    const user = await newUser("learn-restart");
    const queued = () => t.db.job.count({ where: { userId: user, kind: "import-learn", status: "queued" } });
    await importConversations(await userContext(t.db, user), fixture("chatgpt-conversations.json"));
    await startLearning(t.db, user);
    await startLearning(t.db, user);
    expect(await queued()).toBe(1);
    // That job is running (it may have looked for queued conversations for the last time): a new start queues one.
    await t.db.job.updateMany({ where: { userId: user, kind: "import-learn" }, data: { status: "running" } });
    await startLearning(t.db, user);
    expect(await queued()).toBe(1);
    // Finished, a second ago: a new import's start queues one too (a key by the clock matched the finished job).
    await t.db.job.updateMany({ where: { userId: user, kind: "import-learn" }, data: { status: "done" } });
    await startLearning(t.db, user);
    expect(await queued()).toBe(1);
  });

  it("learning from a larger import: workers running at once read every exchange exactly once", async () => {
    const user = await newUser("learn-many");
    for (let k = 0; k < 4; k++) {
      const th = await t.db.thread.create({
        data: {
          userId: user,
          importSource: "chatgpt",
          title: `Old ${k}`,
          createdAt: new Date(Date.UTC(2025, 0, k + 1)),
        },
      });
      await appendItems(
        t.db,
        th.id,
        Array.from({ length: 10 }, (_, i) => ({
          role: i % 2 ? ("assistant" as const) : ("user" as const),
          content: i % 2 ? `answer ${k}-${i - 1}` : `question ${k}-${i}`,
        })),
        { cipher: await threadCipher(t.db, th.id) },
      );
    }
    expect(await learnPlan(t.db, user)).toMatchObject({ threads: 4, remaining: 20 });
    mock.reset();
    mock.script({ json: { decisions: [] }, times: 0 });
    await startLearning(t.db, user);
    const u = await userContext(t.db, user);
    const runs = await Promise.all([1, 2, 3].map(() => learnFromImports(u, conn, { perRun: 20 })));
    expect(runs.reduce((n, r) => n + r.read, 0)).toBe(20);
    const asked = mock.chatRequests().map((r) => JSON.stringify(r.body).match(/question \d-\d/)?.[0]);
    expect(asked.sort()).toEqual(
      Array.from({ length: 4 }, (_, k) => [0, 2, 4, 6, 8].map((i) => `question ${k}-${i}`))
        .flat()
        .sort(),
    );
    expect(await learnPlan(t.db, user)).toMatchObject({ done: 20, remaining: 0, running: false });
  });

  it("a pasted memory list becomes memories waiting for review, bullets removed, secrets and repeats left out", async () => {
    const user = await newUser("paste");
    const r = await importMemoryList(
      await userContext(t.db, user),
      "Memories\n- Lives in Porto\n2. Prefers short answers\n• lives in porto\n\n- password: hunter2hunter2\n",
    );
    expect(r.added).toBe(3);
    expect(r.skipped).toBe(1);
    const rows = await t.db.memory.findMany({ where: { userId: user }, orderBy: { createdAt: "asc" } });
    expect(rows.map((m) => [m.text, m.status])).toEqual([
      ["Memories", "pending"],
      ["Lives in Porto", "pending"],
      ["Prefers short answers", "pending"],
    ]);
    expect(r.rejected).toHaveLength(1);
  });
});
