// Projects (lib/projects): memory that stays where it belongs. Checked on the request the test server receives:
// a project-only thread never carries a memory or passage from outside, a shared one sees general memory too, a
// general chat never sees a project's; what a project learns stays there; moving a memory moves where it is recalled.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { inMemoryScope, userContext, type UserContext } from "@/lib/user-context";
import { listMemories } from "@/lib/memory/long-term";
import { addMemory } from "@/lib/memory/store";
import { createThread } from "@/lib/chat/threads";
import { appendItems } from "@/lib/memory/session";
import { runTurn } from "@/lib/chat/turn";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { createProject, deleteProject, moveMemory, moveThread, updateProject } from "@/lib/projects/projects";
import { learnPlan } from "@/lib/import/learn";
import { exactScope } from "@/lib/projects/scope";
import { consolidateUser } from "@/lib/memory/consolidate";
import { modelChange } from "@/lib/memory/writes";
import { exportUserData } from "@/lib/account/export";
import { importConversations } from "@/lib/import/run";
import { importMemories, memoriesJson } from "@/lib/memory/portable";
import { searchMessages } from "@/lib/chat/search";
import { collect, deferred } from "./helpers/turns";
import fs from "node:fs";
import { strToU8, zipSync } from "fflate";

const fixture = (name: string) =>
  JSON.parse(fs.readFileSync(`tests/fixtures/import/${name}`, "utf8")) as Array<Record<string, unknown>>;

const EXTRACTION = "You maintain a user's long-term memory";
// What is stored (the question names them too, so the request is checked for the stored words).
const REX = "Has a dog named Rex";
const BIKE = "red Cannondale Synapse";
const ALVES = "The detective is Inspector Alves";
const WEAPON = "murder weapon is a silver letter opener";

describe.each(engines)("projects on %s", (engine) => {
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

  async function newUser() {
    const id = (await t.db.user.create({ data: { email: `projects-${engine}-${n++}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, id);
    clearConnectionCache(t.db);
    return userContext(t.db, id);
  }
  /** A finished exchange in a thread (so other threads' recall can find it as a passage). */
  async function said(u: UserContext, threadId: string, question: string, answer: string) {
    await appendItems(
      t.db,
      threadId,
      [
        { role: "user", content: question },
        { role: "assistant", content: answer },
      ],
      { cipher: u.cipher },
    );
  }
  /** The messages of the answer request the test server received for one turn. */
  async function sent(u: UserContext, req: { content: string; threadId?: string; projectId?: string }) {
    const before = mock.chatRequests().length;
    const events = await collect(runTurn(t.db, u.userId, { kind: "send", ...req }, { defer }));
    await flush();
    const start = events.find((e) => e.type === "start") as { threadId: string } | undefined;
    const body = mock
      .chatRequests()
      .slice(before)
      .find((r) => r.body.stream)?.body;
    return { text: JSON.stringify(body?.messages ?? []), threadId: start!.threadId };
  }

  /** `n` alternating user and assistant messages. */
  const lines = (n: number, f: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content: f(i) }));
  /** 2,100 messages with the word "quillon" (more than recall's index lookup reads), then 600 newer ones without. */
  async function swordsThenRain(u: UserContext, threadId: string) {
    await appendItems(
      t.db,
      threadId,
      lines(2100, (i) => `The quillon of sword ${i} is bent`),
      { cipher: u.cipher },
    );
    const other = await createThread(u, { title: "Weather" });
    await appendItems(
      t.db,
      other.id,
      lines(600, (i) => `Rain again on day ${i}`),
      { cipher: u.cipher },
    );
  }

  /** General memory and a general chat about a bike; a project with its own memory and a chat about its plot. */
  async function world(memoryMode: "shared" | "project_only") {
    const u = await newUser();
    await addMemory(u, { text: "Has a dog named Rex", source: "explicit" }, "user", "said so");
    const general = await createThread(u, { title: "Bikes" });
    await said(u, general.id, "My bike is a red Cannondale Synapse", "Nice bike.");
    const p = await createProject(u, {
      name: "Novel",
      instructions: "Answer as a crime-fiction editor.",
      memoryMode,
    });
    const inProject = inMemoryScope(u, exactScope(p.id));
    await addMemory(inProject, { text: "The detective is Inspector Alves", source: "explicit" }, "user", "said");
    const plot = await createThread(u, { title: "Plot", projectId: p.id });
    await said(u, plot.id, "The murder weapon is a silver letter opener", "A classic.");
    return { u, p, general, plot };
  }
  const ASK = "Remind me about Rex, my Cannondale bike, Inspector Alves and the silver letter opener";

  it("a project-only thread carries nothing from outside: no general memory, no other chat's passage", async () => {
    const { u, p } = await world("project_only");
    const { text } = await sent(u, { content: ASK, projectId: p.id });
    expect(text).toContain("Answer as a crime-fiction editor.");
    expect(text).toContain(ALVES);
    expect(text).toContain(WEAPON); // a passage from the project's own other thread
    expect(text).not.toContain(REX);
    expect(text).not.toContain(BIKE);
  });

  it("a project's own message is found even when far more messages outside it share the word", async () => {
    const u = await newUser();
    // General messages with the word, more than the lookup reads; newer ones without it.
    const armoury = await createThread(u, { title: "Armoury" });
    await swordsThenRain(u, armoury.id);
    const p = await createProject(u, { name: "Novel", memoryMode: "project_only" });
    const plot = await createThread(u, { title: "Plot", projectId: p.id });
    await said(u, plot.id, "The dagger's quillon is engraved with a raven", "A striking clue.");
    // Newer chat in the project, so the clue is found by search, not as a recent exchange.
    await appendItems(
      t.db,
      plot.id,
      lines(60, (i) => `Chapter ${i} drafted`),
      { cipher: u.cipher },
    );
    const notes = await createThread(u, { title: "Notes", projectId: p.id });
    await appendItems(
      t.db,
      notes.id,
      lines(60, (i) => `Note ${i} filed`),
      { cipher: u.cipher },
    );
    const { text } = await sent(u, { content: "What is engraved on the quillon?", projectId: p.id });
    expect(text).toContain("engraved with a raven");
    expect(text).not.toContain("is bent");
  });

  it("a general chat finds its message even when a project holds far more messages with the word", async () => {
    const u = await newUser();
    const p = await createProject(u, { name: "Armoury", memoryMode: "project_only" });
    const armoury = await createThread(u, { title: "Swords", projectId: p.id });
    await swordsThenRain(u, armoury.id);
    const heirloom = await createThread(u, { title: "Heirloom" });
    await said(u, heirloom.id, "Grandpa's quillon is engraved with a raven", "A lovely heirloom.");
    await appendItems(
      t.db,
      heirloom.id,
      lines(60, (i) => `Photo ${i} sorted`),
      { cipher: u.cipher },
    );
    // Many general chats: the scope is told by the few threads it leaves out.
    for (let i = 0; i < 40; i++) await said(u, (await createThread(u, { title: `Chat ${i}` })).id, `Hi ${i}`, "Hello");
    const { text } = await sent(u, { content: "What is engraved on the quillon?" });
    expect(text).toContain("engraved with a raven");
    expect(text).not.toContain("is bent");
  });

  it("a shared project sees general memory too; a general chat never sees the project's", async () => {
    const { u, p } = await world("shared");
    const inside = await sent(u, { content: ASK, projectId: p.id });
    expect(inside.text).toContain(ALVES);
    expect(inside.text).toContain(REX);
    expect(inside.text).toContain(BIKE);
    const outside = await sent(u, { content: ASK });
    expect(outside.text).toContain(REX);
    expect(outside.text).toContain(BIKE);
    expect(outside.text).not.toContain(ALVES);
    expect(outside.text).not.toContain(WEAPON);
    expect(outside.text).not.toContain("crime-fiction editor");
  });

  it("a memory learned in a project stays in it, and the extraction is shown only the project's memories", async () => {
    const { u, p } = await world("project_only");
    mock.script({ system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "The novel is set in 1920s Lisbon" }] } });
    const { threadId } = await sent(u, { content: "Inspector Alves works in 1920s Lisbon", projectId: p.id });
    const extraction = mock.chatRequests().find((r) => JSON.stringify(r.body.messages).includes(EXTRACTION));
    expect(extraction).toBeDefined();
    expect(JSON.stringify(extraction!.body.messages)).not.toContain(REX);
    const learned = await t.db.memory.findFirstOrThrow({ where: { userId: u.userId, text: { contains: "1920s" } } });
    expect(learned).toMatchObject({ projectId: p.id, sourceThreadId: threadId });
    // Not in a general chat's prompt, even when asked about it by name.
    expect((await sent(u, { content: "Where is my novel set, 1920s Lisbon?" })).text).not.toContain("The novel is set");
  });

  it("moving a memory changes where it is recalled, with a version saying so", async () => {
    const { u, p } = await world("shared");
    const rex = await t.db.memory.findFirstOrThrow({ where: { userId: u.userId, text: "Has a dog named Rex" } });
    await moveMemory(u, rex.id, p.id);
    expect((await sent(u, { content: "Tell me about my dog Rex" })).text).not.toContain("Has a dog named Rex");
    expect((await sent(u, { content: "Tell me about my dog Rex", projectId: p.id })).text).toContain(
      "Has a dog named Rex",
    );
    await moveMemory(u, rex.id, null);
    expect((await sent(u, { content: "Tell me about my dog Rex" })).text).toContain("Has a dog named Rex");
    const reasons = (await t.db.memoryVersion.findMany({ where: { memoryId: rex.id } })).map((v) => v.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        "Moved from general memory into a project",
        "Moved out of its project into general memory",
      ]),
    );
  });

  it("a thread moved into a project-only project takes its passages with it; mode changes apply at once", async () => {
    const { u, p, general } = await world("shared");
    await moveThread(u, general.id, p.id);
    expect((await sent(u, { content: ASK })).text).not.toContain(BIKE);
    await updateProject(u, { id: p.id, memoryMode: "project_only" });
    const inside = await sent(u, { content: ASK, projectId: p.id });
    expect(inside.text).toContain(BIKE);
    expect(inside.text).not.toContain(REX);
  });

  it("the memories file puts a project's memories back in a project, not in general memory", async () => {
    const { u, p } = await world("project_only");
    const file = JSON.parse(JSON.stringify(await memoriesJson(u)));
    const v = await newUser();
    expect(await importMemories(v, file)).toMatchObject({ added: 2, skipped: 0 });
    const general = await listMemories(v, {}, { inContextScope: true });
    expect(general.map((m) => m.text)).toEqual(["Has a dog named Rex"]);
    const [made] = await v.db.project.findMany({ where: { userId: v.userId } });
    expect(made).toMatchObject({ memoryMode: "project_only" });
    expect(v.cipher.open(made.name)).toBe("Novel");
    const inMade = await listMemories(inMemoryScope(v, exactScope(made.id)), {}, { inContextScope: true });
    expect(inMade.map((m) => m.text)).toEqual(["The detective is Inspector Alves"]);
    // Again: nothing added, no second project. Back into the account it came from: its own project, unchanged.
    expect(await importMemories(v, file)).toMatchObject({ added: 0, skipped: 2 });
    expect(await v.db.project.count({ where: { userId: v.userId } })).toBe(1);
    expect(await importMemories(u, file)).toMatchObject({ added: 0, skipped: 2 });
    expect(await u.db.project.findMany({ where: { userId: u.userId }, select: { id: true } })).toEqual([{ id: p.id }]);
  });

  it("another user's project, thread or memory is out of reach", async () => {
    const { u, p } = await world("shared");
    const other = await newUser();
    await expect(createThread(other, { projectId: p.id })).rejects.toThrow(/not found/i);
    await expect(updateProject(other, { id: p.id, name: "Mine" })).rejects.toThrow(/not found/i);
    const alves = await t.db.memory.findFirstOrThrow({ where: { userId: u.userId, projectId: p.id } });
    await expect(moveMemory(other, alves.id, null)).rejects.toThrow(/not found/i);
    const mine = await createThread(other, {});
    await expect(moveThread(other, mine.id, p.id)).rejects.toThrow(/not found/i);
    // A model in a general chat cannot touch a project's memory by naming its id.
    await expect(modelChange(u, { op: "archive", id: alves.id }, { reason: "test" })).rejects.toThrow(/not found/i);
    expect((await t.db.memory.findUniqueOrThrow({ where: { id: alves.id } })).status).toBe("active");
  });

  it("moving into a project while it is being deleted: moved before, or 'not found' after, never a broken row", async () => {
    const u = await newUser();
    for (let i = 0; i < 5; i++) {
      const p = await createProject(u, { name: `Doomed ${i}` });
      const th = await createThread(u, {});
      const m = await addMemory(u, { text: `Fact ${i} worth keeping`, source: "explicit" }, "user", "said");
      const results = await Promise.allSettled([
        moveThread(u, th.id, p.id),
        moveMemory(u, m.id, p.id),
        createThread(u, { projectId: p.id }),
        deleteProject(u, p.id),
      ]);
      for (const r of results.slice(0, 3))
        if (r.status === "rejected") expect(String((r.reason as Error).message)).toMatch(/not found/i);
      expect(results[3].status).toBe("fulfilled");
      // Whatever the order, nothing points at the deleted project.
      expect(await t.db.thread.count({ where: { projectId: p.id } })).toBe(0);
      expect(await t.db.memory.count({ where: { projectId: p.id } })).toBe(0);
    }
  });

  it("consolidation never merges across projects", async () => {
    const u = await newUser();
    const p = await createProject(u, { name: "Garden" });
    await addMemory(u, { text: "Prefers tea", source: "inferred" }, "model", "learned");
    await addMemory(inMemoryScope(u, exactScope(p.id)), { text: "Prefers tea", source: "inferred" }, "model", "x");
    await consolidateUser(u, null);
    expect(await t.db.memory.count({ where: { userId: u.userId, text: "Prefers tea", status: "active" } })).toBe(2);
  });

  it("content search filters by project; the export carries projects and an import brings them back", async () => {
    const { u, p, plot } = await world("project_only");
    expect((await searchMessages(u, { q: "letter opener", project: p.id })).hits).toHaveLength(1);
    expect((await searchMessages(u, { q: "letter opener", project: "none" })).hits).toHaveLength(0);
    expect((await searchMessages(u, { q: "Cannondale", project: p.id })).hits).toHaveLength(0);

    let file = "";
    for await (const chunk of exportUserData(u)) file += chunk;
    const parsed = JSON.parse(file) as { projects: Array<{ id: string; name: string; instructions: string }> };
    expect(parsed.projects).toMatchObject([
      { id: p.id, name: "Novel", instructions: "Answer as a crime-fiction editor.", memoryMode: "project_only" },
    ]);
    // Into another account: the project is made again, its thread and memory land in it.
    const fresh = await newUser();
    const report = await importConversations(fresh, [file]);
    expect(report.conversations).toBe(2);
    const [made] = await t.db.project.findMany({ where: { userId: fresh.userId } });
    expect(made).toMatchObject({ name: "Novel", memoryMode: "project_only" });
    const plotCopy = await t.db.thread.findFirstOrThrow({
      where: { userId: fresh.userId, importRef: `mnemo:${plot.id}` },
    });
    expect(plotCopy.projectId).toBe(made.id);
    const memories = await listMemories(fresh, { scope: made.id });
    expect(memories.map((m) => m.text)).toEqual(["The detective is Inspector Alves"]);
    expect((await listMemories(fresh, { scope: "general" })).map((m) => m.text)).toEqual(["Has a dog named Rex"]);

    // Deleting the project deletes its threads and memories, nothing else.
    await deleteProject(u, p.id);
    expect(await t.db.thread.count({ where: { id: plot.id } })).toBe(0);
    expect(await t.db.memory.count({ where: { userId: u.userId } })).toBe(1);
  });

  it("ChatGPT and Claude conversations that belonged to a project land in one; a second import finds the same", async () => {
    const u = await newUser();
    const [gpt] = fixture("chatgpt-conversations.json");
    const [claude] = fixture("claude-conversations.json");
    const files = () => [
      JSON.stringify([{ ...gpt, gizmo_id: "g-p-67a1b2c3d4e5", gizmo_type: "snorlax" }]),
      JSON.stringify([
        { ...claude, project_uuid: "0f1e2d3c-aaaa", project: { uuid: "0f1e2d3c-aaaa", name: "Thesis" } },
      ]),
    ];
    const [gptReport] = [await importConversations(u, [files()[0]]), await importConversations(u, [files()[1]])];
    // ChatGPT's export has no project names: the project is named after its first conversation, and the report says so.
    expect(gptReport.projectsNamedAfterConversations).toEqual(["Trip to Lisbon"]);
    const projects = await t.db.project.findMany({ where: { userId: u.userId }, orderBy: { name: "asc" } });
    expect(projects.map((p) => p.name)).toEqual(["Thesis", "Trip to Lisbon"]);
    const threads = await t.db.thread.findMany({ where: { userId: u.userId }, select: { projectId: true } });
    expect(threads.map((x) => x.projectId).sort()).toEqual(projects.map((p) => p.id).sort());
    // An earlier conversation of the project, in a later export listed newest first: the name follows the earliest.
    const older = { ...gpt, id: "older-one", conversation_id: "older-one", title: "Kitchen ideas", create_time: 1e9 };
    const both = JSON.stringify([
      { ...gpt, gizmo_id: "g-p-67a1b2c3d4e5", gizmo_type: "snorlax" },
      { ...older, gizmo_id: "g-p-67a1b2c3d4e5", gizmo_type: "snorlax" },
    ]);
    expect((await importConversations(u, [both])).projectsNamedAfterConversations).toEqual(["Kitchen ideas"]);
    const gptProject = await t.db.project.findFirstOrThrow({
      where: { userId: u.userId, importRef: { startsWith: "chatgpt:" } },
    });
    expect(gptProject.name).toBe("Kitchen ideas");
    // Renamed by the user, found again by its id: a second import adds no project and keeps the user's name.
    await updateProject(u, { id: gptProject.id, name: "Kitchen remodel" });
    for (const f of files()) await importConversations(u, [f]);
    const newest = { ...gpt, id: "newest", conversation_id: "newest", title: "Aaa first by name", create_time: 1 };
    await importConversations(u, [
      JSON.stringify([{ ...newest, gizmo_id: "g-p-67a1b2c3d4e5", gizmo_type: "snorlax" }]),
    ]);
    expect(await t.db.project.count({ where: { userId: u.userId } })).toBe(2);
    expect((await t.db.project.findUniqueOrThrow({ where: { id: gptProject.id } })).name).toBe("Kitchen remodel");
  });

  it("Claude's export zip: projects.json names the projects and brings their instructions, wherever it sits", async () => {
    const [claude] = fixture("claude-conversations.json");
    // The shape of Claude's projects.json (docs abridged); the starter project is Anthropic's example.
    const projectsJson = [
      {
        uuid: "0f1e2d3c-aaaa",
        name: "Thesis",
        description: "",
        is_private: true,
        is_starter_project: false,
        prompt_template: "Reply as my thesis supervisor.",
        created_at: "2025-03-01T10:00:00Z",
        updated_at: "2025-03-01T10:00:00Z",
        creator: { uuid: "u-1", full_name: "Ana" },
        docs: [{ uuid: "d-1", filename: "outline.md", content: "# Outline\n".repeat(2000) }],
      },
      { uuid: "5a5a5a5a-bbbb", name: "Garden", prompt_template: "", is_starter_project: false, docs: [] },
      {
        uuid: "9c9c9c9c-cccc",
        name: "How to use Claude",
        prompt_template: "",
        is_starter_project: true,
        docs: [{ uuid: "d-9", filename: "Claude prompting guide.md", content: "Anthropic's example document." }],
      },
    ];
    // A conversation naming its project by id only comes first in the zip; projects.json after it.
    const conversations = [{ ...claude, project_uuid: "0f1e2d3c-aaaa" }];
    const zip = zipSync({
      "conversations.json": strToU8(JSON.stringify(conversations)),
      "users.json": strToU8("[]"),
      "projects.json": strToU8(JSON.stringify(projectsJson)),
    });
    const u = await newUser();
    const report = await importConversations(u, [zip]);
    expect(report.conversations).toBe(1);
    expect(report.projects).toEqual({ added: 1, named: 1 });
    const projects = await t.db.project.findMany({ where: { userId: u.userId }, orderBy: { name: "asc" } });
    expect(projects.map((p) => [p.name, p.instructions])).toEqual([
      ["Garden", ""],
      ["Thesis", "Reply as my thesis supervisor."],
    ]);
    const thread = await t.db.thread.findFirstOrThrow({
      where: { userId: u.userId, importSource: "claude", title: { not: { contains: "project knowledge" } } },
    });
    expect(thread.projectId).toBe(projects[1].id);
    // The project's knowledge file came too, as a chat of one message in the project; the starter project's did not.
    expect(report.projectDocuments).toBe(1);
    const docs = await t.db.thread.findMany({ where: { userId: u.userId, title: { contains: "project knowledge" } } });
    expect(docs.map((d) => [d.title, d.projectId])).toEqual([["outline.md (project knowledge)", projects[1].id]]);
    const [doc] = await t.db.item.findMany({ where: { threadId: docs[0].id } });
    expect(doc.content.startsWith("[Project knowledge file: outline.md]\n\n# Outline")).toBe(true);
    // A file is reference, not something the user said: learning from the import does not read it.
    expect(await learnPlan(t.db, u.userId)).toMatchObject({ remaining: 1 });

    // Renamed since: a second import (newer layout, one file per project, before the conversations) keeps the name.
    await updateProject(u, { id: projects[1].id, name: "PhD", instructions: "Be brief." });
    const again = zipSync({
      "projects/0f1e2d3c-aaaa.json": strToU8(JSON.stringify(projectsJson[0])),
      "projects/5a5a5a5a-bbbb.json": strToU8(JSON.stringify(projectsJson[1])),
      "conversations.json": strToU8(JSON.stringify(conversations)),
    });
    const second = await importConversations(u, [again]);
    expect(second).toMatchObject({ conversations: 0, duplicates: 1, projects: { added: 0, named: 0 } });
    expect(second.projectDocuments).toBeUndefined(); // the knowledge file is not stored twice
    const after = await t.db.project.findMany({ where: { userId: u.userId }, orderBy: { name: "asc" } });
    expect(after.map((p) => [p.name, p.instructions])).toEqual([
      ["Garden", ""],
      ["PhD", "Be brief."],
    ]);

    // projects.json chosen on its own: the projects, no conversations and nothing skipped.
    const other = await newUser();
    const alone = await importConversations(other, [JSON.stringify(projectsJson)]);
    expect(alone).toMatchObject({
      conversations: 0,
      skipped: { count: 0 },
      projects: { added: 2, named: 0 },
      projectDocuments: 1,
    });
  });

  it("a long knowledge file comes in whole, in parts that end at paragraphs, and its last pages are found", async () => {
    // About 300 pages of text (Claude keeps the text it extracted from a PDF): far over one message's 100,000.
    const pages = Array.from(
      { length: 300 },
      (_, i) => `Page ${i + 1}. ${"Soil samples were dried and sieved. ".repeat(24)}`,
    );
    pages[297] += "The control plot near Braga showed the highest nitrogen.";
    const content = pages.join("\n\n");
    const projectsJson = [
      { uuid: "long-1", name: "Thesis", prompt_template: "", docs: [{ uuid: "d-1", filename: "thesis.pdf", content }] },
    ];
    const u = await newUser();
    const report = await importConversations(u, [JSON.stringify(projectsJson)]);
    expect(report.projectDocuments).toBe(1);
    const doc = await t.db.thread.findFirstOrThrow({ where: { userId: u.userId, title: { contains: "knowledge" } } });
    const items = await t.db.item.findMany({ where: { threadId: doc.id }, orderBy: { position: "asc" } });
    expect(items.length).toBeGreaterThan(content.length / 20_000);
    const label = /^\[Project knowledge file: thesis\.pdf, part (\d+) of (\d+)\]\n\n/;
    const bodies = items.map((it, k) => {
      const m = label.exec(it.content)!;
      expect([Number(m[1]), Number(m[2])]).toEqual([k + 1, items.length]);
      const body = it.content.slice(m[0].length);
      expect(body.length).toBeLessThanOrEqual(20_000);
      return body;
    });
    // Nothing dropped, nothing added; each part but the last ends at a page's end.
    expect(bodies.join("")).toBe(content);
    for (const b of bodies.slice(0, -1)) expect(b.endsWith("\n\n")).toBe(true);
    const found = await searchMessages(u, { q: "Braga nitrogen", project: doc.projectId! });
    expect(found.hits).toHaveLength(1);
  });

  it("Claude's memory (memories.json) waits for review as statements, in general memory and in each project", async () => {
    const [claude] = fixture("claude-conversations.json");
    // The shape Claude's export writes: one entry per account, a markdown summary for all chats and one per project.
    const memoriesJson = [
      {
        conversations_memory:
          "**Work context**\n\nAna is a PhD student in soil science at the University of Porto. " +
          "She writes her thesis in LaTeX.\n\n**Personal context**\n\nAna keeps a vegetable garden and has a dog named Bolt.",
        project_memories: { "0f1e2d3c-aaaa": "The thesis is due in June 2026. Dr. Sousa is the supervisor." },
        account_uuid: "acct-1",
      },
    ];
    const projectsJson = [{ uuid: "0f1e2d3c-aaaa", name: "Thesis", prompt_template: "", docs: [] }];
    const zip = zipSync({
      "conversations.json": strToU8(JSON.stringify([claude])),
      "memories.json": strToU8(JSON.stringify(memoriesJson)),
      "projects.json": strToU8(JSON.stringify(projectsJson)),
    });
    const u = await newUser();
    const report = await importConversations(u, [zip]);
    expect(report).toMatchObject({ conversations: 1, claudeMemory: { added: 5, skipped: 0 } });
    const rows = await t.db.memory.findMany({
      where: { userId: u.userId },
      select: { text: true, status: true, source: true, sourceRef: true, projectId: true },
      orderBy: { createdAt: "asc" },
    });
    const thesis = await t.db.project.findFirstOrThrow({ where: { userId: u.userId, name: "Thesis" } });
    // Headings state nothing; each sentence is a statement; "Dr." does not end one. Nothing is active until approved.
    expect(rows.map((r) => [r.text, r.projectId === thesis.id ? "Thesis" : "general"])).toEqual([
      ["Ana is a PhD student in soil science at the University of Porto.", "general"],
      ["She writes her thesis in LaTeX.", "general"],
      ["Ana keeps a vegetable garden and has a dog named Bolt.", "general"],
      ["The thesis is due in June 2026.", "Thesis"],
      ["Dr. Sousa is the supervisor.", "Thesis"],
    ]);
    expect(
      rows.every((r) => r.status === "pending" && r.source === "inferred" && r.sourceRef === "claude:memory"),
    ).toBe(true);
    // The same export again adds nothing.
    expect((await importConversations(u, [zip])).claudeMemory).toEqual({ added: 0, skipped: 5 });
  });
});
