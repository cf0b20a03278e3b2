// Shared projects (lib/projects/access.ts, members.ts): three people on one instance, on each engine. What they rely
// on: a memory taught in one member's chat reaches another member's answer, named with its teacher; a member's own
// general memory never reaches the project; a viewer writes nothing; a chat is continued by its author alone; the
// owner's rules about members hold; leaving takes what only the leaver taught and keeps what someone else confirmed;
// a removed member's next turn is refused at once; another project's id is "not found".
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { userContext, type UserContext } from "@/lib/user-context";
import { addMemory } from "@/lib/memory/store";
import { runTurn } from "@/lib/chat/turn";
import { stopTurn } from "@/lib/chat/generations";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { deleteProject, getProject, listAllProjects, updateProject } from "@/lib/projects/projects";
import { answerContext, fileContext, projectAccess, threadAccess, writeContext } from "@/lib/projects/access";
import {
  changeRole,
  createSharedProject,
  inviteMember,
  leaveProject,
  listMembers,
  projectHistory,
  removeMember,
  transferOwnership,
} from "@/lib/projects/members";
import {
  addProjectMemory,
  forgetProjectMemory,
  projectConflicts,
  projectMemories,
  settleProjectConflict,
} from "@/lib/projects/project-memory";
import { markConflict } from "@/lib/memory/conflicts";
import { listThreads, threadView } from "@/lib/chat/threads";
import { deleteAccount } from "@/lib/account/delete";
import { exportUserData } from "@/lib/account/export";
import { appendItems } from "@/lib/memory/session";
import { collect, deferred } from "./helpers/turns";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import crypto from "node:crypto";
import { setEncryptionKeys } from "@/lib/crypto/content";
import { createProject } from "@/lib/projects/projects";
import { moveChat, moveMemoryTo, shareExistingProject } from "@/lib/projects/share-existing";
import { inMemoryScope } from "@/lib/user-context";
import { exactScope } from "@/lib/projects/scope";
import { bindToMessage, openAttachment, saveUpload } from "@/lib/attachments/store";
import { authenticateKey, createApiKey } from "@/lib/keys/api-keys";
import { runMemoryToolCall } from "@/lib/memory/tools";
import { reviewAttachment, reviewThread, userThreadsForAdmin } from "@/lib/admin/review";
import { completeOnce } from "@/lib/api/completions";
import { rateAnswer } from "@/lib/memory/feedback";
import { searchMessages } from "@/lib/chat/search";
import { cancelInvite, listInvites } from "@/lib/projects/invites";
import { createUser } from "@/lib/auth/users";
import { getConfig } from "@/lib/config";
import { runDueJobs } from "@/lib/jobs/worker";

const EXTRACTION = "You maintain a user's long-term memory";

describe.each(engines)("shared projects on %s", (engine) => {
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

  async function person(name: string): Promise<UserContext> {
    const k = n++;
    const u = await t.db.user.create({ data: { email: `${name.toLowerCase()}-${engine}-${k}@example.com`, name } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, u.id);
    clearConnectionCache(t.db);
    return userContext(t.db, u.id);
  }
  /** Ada owns "Garden"; Ben is an editor, Cy a viewer. */
  async function team() {
    const [ada, ben, cy] = [await person("Ada"), await person("Ben"), await person("Cy")];
    const { id } = await createSharedProject(ada, { name: "Garden", instructions: "Answer as a gardener." });
    const owner = await projectAccess(ada, id, "own");
    const emailOf = async (u: UserContext) => (await t.db.user.findUniqueOrThrow({ where: { id: u.userId } })).email;
    await inviteMember(owner, { email: await emailOf(ben), role: "editor" });
    await inviteMember(owner, { email: await emailOf(cy), role: "viewer" });
    return { ada, ben, cy, projectId: id, owner, emailOf };
  }
  async function turn(u: UserContext, req: Record<string, unknown>) {
    const before = mock.chatRequests().length;
    const events = await collect(runTurn(t.db, u.userId, { kind: "send", ...req }, { defer }));
    await flush();
    const start = events.find((e) => e.type === "start") as { threadId: string } | undefined;
    const body = mock
      .chatRequests()
      .slice(before)
      .find((r) => r.body.stream)?.body;
    return { prompt: JSON.stringify(body?.messages ?? []), threadId: start?.threadId, events };
  }
  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
      return null;
    } catch (e) {
      if (e instanceof NotFoundError) return "not found";
      return e instanceof ForbiddenError ? "forbidden" : String((e as Error).message ?? e);
    }
  };

  it("a memory taught in Ada's chat reaches Ben's answer, named with its teacher; nobody's own memory leaks", async () => {
    const { ada, ben, cy, projectId } = await team();
    // Ben's general memory is his: it must never reach the project (its prompts, its learning, its list).
    await addMemory(ben, { text: "Ben's bank PIN hint is the tulip year", source: "explicit" }, "user", "said");
    mock.script({ system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "The roses are watered on Sundays" }] } });
    const first = await turn(ada, { content: "We water the roses on Sundays", projectId });
    expect(first.prompt).toContain("Answer as a gardener.");
    const learned = await t.db.memory.findFirstOrThrow({ where: { text: { contains: "roses are watered" } } });
    // The project's row, under the project's account: not Ada's.
    expect(learned.userId).not.toBe(ada.userId);
    expect(learned.projectId).toBe(projectId);
    // Ada pays for her chat: the answer, its title and the learning from it; the project's account has no allowance.
    const used = await t.db.usageDay.findMany({ where: { userId: { in: [ada.userId, learned.userId] } } });
    expect(used.map((d) => d.userId)).toEqual([ada.userId]);
    expect(used[0]).toMatchObject({ turns: 1 });
    expect(used[0].modelCalls).toBeGreaterThanOrEqual(3); // answer, title, learning

    const second = await turn(ben, { content: "When do the roses get watered?", projectId });
    expect(second.prompt).toContain("The roses are watered on Sundays");
    expect(second.prompt).not.toContain("tulip year");
    const list = await projectMemories(await projectAccess(cy, projectId, "read"));
    expect(list.find((m) => m.text.includes("roses"))).toMatchObject({ origin: "learned", by: "Ada" });
    expect(JSON.stringify(list)).not.toContain("tulip");
    // Ada's memory page (her own rows) holds nothing of the project's.
    expect(await t.db.memory.count({ where: { userId: ada.userId } })).toBe(0);
  });

  it("members read each other's chats; only the author continues one; a viewer writes nothing", async () => {
    const { ada, ben, cy, projectId } = await team();
    const { threadId } = await turn(ada, { content: "Plan the herb bed", projectId });
    // Listed for every member, with its author.
    for (const u of [ben, cy]) {
      const a = await projectAccess(u, projectId, "read");
      const { threads } = await listThreads(a.content, { project: projectId });
      expect(threads.map((x) => [x.id, x.authorId])).toEqual([[threadId, ada.userId]]);
      const access = await threadAccess(u, threadId!, "read");
      const view = await threadView(access.content, threadId!, access);
      expect(view.thread.shared).toEqual({ author: "Ada", mayContinue: false, private: false });
      expect(view.items.map((i) => i.content)).toContain("Plan the herb bed");
    }
    // Ben (an editor) may not continue Ada's chat; Cy (a viewer) may not chat at all, in any way.
    expect(await refusal(turn(ben, { content: "me too", threadId }))).toBe("forbidden");
    expect(await refusal(turn(cy, { content: "me too", threadId }))).toBe("forbidden");
    expect(await refusal(turn(cy, { content: "a new chat", projectId }))).toBe("forbidden");
    expect(await refusal(addProjectMemory(await projectAccess(cy, projectId, "read"), "x"))).toBe("forbidden");
    expect(await refusal(projectAccess(cy, projectId, "write"))).toBe("forbidden");
    expect(await refusal(updateProject(cy, { id: projectId, name: "Mine now" }))).toBe("forbidden");
    // Ada continues her own.
    const again = await turn(ada, { content: "Add basil", threadId });
    expect(again.prompt).toContain("Plan the herb bed");
  });

  it("the owner's rules: editors invite but cannot make owners or delete; another project's id is not found", async () => {
    const { ada, ben, cy, projectId, owner, emailOf } = await team();
    const dee = await person("Dee");
    const asBen = await projectAccess(ben, projectId, "write");
    await inviteMember(asBen, { email: await emailOf(dee), role: "viewer" });
    expect(await refusal(inviteMember(asBen, { email: await emailOf(dee), role: "owner" as never }))).toMatch(
      /Invalid|owner/,
    );
    expect(await refusal(changeRole(asBen, cy.userId, "editor"))).toBe("forbidden");
    expect(await refusal(removeMember(asBen, cy.userId))).toBe("forbidden");
    expect(await refusal(deleteProject(ben, projectId))).toBe("forbidden");
    expect(await refusal(projectAccess(cy, projectId, "write"))).toBe("forbidden");
    // A stranger: every way in says "not found", as for a project that does not exist.
    const eve = await person("Eve");
    expect(await refusal(getProject(eve, projectId))).toBe("not found");
    expect(await refusal(projectAccess(eve, projectId, "read"))).toBe("not found");
    expect(await refusal(turn(eve, { content: "hello", projectId }))).toBe("not found");
    expect((await listAllProjects(eve)).map((p) => p.id)).not.toContain(projectId);
    expect((await listAllProjects(cy)).find((p) => p.id === projectId)).toMatchObject({ shared: true, role: "viewer" });
    // Ownership moves; the old owner stays an editor; the history says who did what.
    await transferOwnership(owner, ben.userId);
    const roles = Object.fromEntries((await listMembers(owner)).map((m) => [m.userId, m.role]));
    expect(roles[ada.userId]).toBe("editor");
    expect(roles[ben.userId]).toBe("owner");
    const history = await projectHistory(owner);
    expect(history[0]).toMatchObject({ kind: "owner", subject: "Ben", actor: "Ada" });
    expect(history.some((h) => h.kind === "joined" && h.subject === "Dee" && h.actor === "Ben")).toBe(true);
  });

  it("leaving takes the leaver's chats and what only they taught; what another member confirmed stays", async () => {
    const { ada, ben, cy, projectId } = await team();
    mock.script(
      { system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "The greenhouse door sticks" }] } },
      { system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "Compost is turned monthly" }] } },
    );
    const bensChat = await turn(ben, { content: "The greenhouse door sticks again", projectId });
    await turn(ben, { content: "We turn the compost monthly", projectId });
    // Ada teaches the compost fact again in her own chat: it is now confirmed by someone else.
    mock.script({ system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "Compost is turned monthly" }] } });
    await turn(ada, { content: "Compost gets turned monthly, right?", projectId });
    await addProjectMemory(await projectAccess(ben, projectId, "write"), "The hose is in the shed");

    await leaveProject(await projectAccess(ben, projectId, "read"));
    const left = (await projectMemories(await projectAccess(cy, projectId, "read"))).map((m) => m.text);
    expect(left).toContain("Compost is turned monthly");
    expect(left).not.toContain("The greenhouse door sticks");
    expect(left).not.toContain("The hose is in the shed");
    expect(await t.db.thread.count({ where: { id: bensChat.threadId } })).toBe(0);
    expect(await refusal(projectAccess(ben, projectId, "read"))).toBe("not found");
    // Rejoining brings nothing back.
    await inviteMember(await projectAccess(ada, projectId, "own"), {
      email: (await t.db.user.findUniqueOrThrow({ where: { id: ben.userId } })).email,
      role: "editor",
    });
    const back = (await projectMemories(await projectAccess(ben, projectId, "read"))).map((m) => m.text);
    expect(back).not.toContain("The greenhouse door sticks");
    expect(await t.db.thread.count({ where: { projectId, authorId: ben.userId } })).toBe(0);
  });

  it("a removed member's next turn, stop and read are refused at once", async () => {
    const { ada, ben, projectId, owner } = await team();
    const { threadId } = await turn(ben, { content: "Start the tomato plan", projectId });
    // An answer of Ben's still being written when he is removed.
    const [, streaming] = await appendItems(
      t.db,
      threadId!,
      [
        { role: "user", content: "and peppers" },
        { role: "assistant", status: "streaming" },
      ],
      { cipher: (await threadAccess(ben, threadId!, "read")).content.cipher },
    );
    const { cipher, userId: rows } = (await threadAccess(ben, threadId!, "read")).content;
    const append = () =>
      appendItems(t.db, threadId!, [{ role: "user", content: "raced" }], {
        as: { actorId: ben.userId, userId: rows },
        cipher,
      });
    // The append states the rule itself, so a turn that passed the check just before a change still writes nothing:
    // an author made a viewer...
    // Never under the member's own key: the thread's rows are the project's.
    const underOwnKey = { as: { actorId: ben.userId, userId: ben.userId }, cipher: ben.cipher };
    expect(await appendItems(t.db, threadId!, [{ role: "user", content: "mine?" }], underOwnKey)).toEqual([]);
    await changeRole(owner, ben.userId, "viewer");
    expect(await append()).toEqual([]);
    await changeRole(owner, ben.userId, "editor");
    expect(await append()).toHaveLength(1);
    // ...or removed.
    await removeMember(owner, ben.userId);
    expect(await append()).toEqual([]);
    expect(await refusal(turn(ben, { content: "still here?", threadId }))).toBe("not found");
    expect(await stopTurn(t.db, ben.userId, streaming.id)).toBe(false);
    expect(await refusal(threadAccess(ben, threadId!, "read"))).toBe("not found");
    // The owner decided nothing about leavers' chats: Ben's chat went with him.
    expect(await refusal(threadAccess(ada, threadId!, "read"))).toBe("not found");
  });

  it("deleting an account passes an owned project on and takes the account's chats; the export marks contributions", async () => {
    const { ada, ben, cy, projectId } = await team();
    const { threadId } = await turn(ada, { content: "Ada's seed order: sweet peas", projectId });
    await addProjectMemory(await projectAccess(ben, projectId, "write"), "Ben keeps the seed catalogue");
    let exported = "";
    for await (const chunk of exportUserData(ada)) exported += chunk;
    const doc = JSON.parse(exported) as {
      sharedProjects: Array<{
        name: string;
        contributed: boolean;
        chats: Array<{ items: Array<{ content: string }> }>;
      }>;
    };
    expect(doc.sharedProjects[0]).toMatchObject({ name: "Garden", contributed: true });
    expect(JSON.stringify(doc.sharedProjects[0].chats)).toContain("sweet peas");
    expect(JSON.stringify(doc.sharedProjects)).not.toContain("seed catalogue"); // Ben's, not Ada's

    await deleteAccount(t.db, ada.userId, { actorId: ada.userId });
    const now = await listMembers(await projectAccess(ben, projectId, "read"));
    expect(now.find((m) => m.userId === ben.userId)?.role).toBe("owner");
    expect(await t.db.thread.count({ where: { id: threadId } })).toBe(0);
    expect((await projectMemories(await projectAccess(cy, projectId, "read"))).map((m) => m.text)).toContain(
      "Ben keeps the seed catalogue",
    );
    const history = await projectHistory(await projectAccess(ben, projectId, "read"));
    expect(history.find((h) => h.kind === "deleted")).toMatchObject({ subject: null });
    // A project whose only member deletes their account goes with its account and key.
    const solo = await person("Solo");
    const p = await createSharedProject(solo, { name: "Alone" });
    const account = (await t.db.project.findUniqueOrThrow({ where: { id: p.id } })).userId;
    await deleteAccount(t.db, solo.userId, { actorId: solo.userId });
    expect(await t.db.project.count({ where: { id: p.id } })).toBe(0);
    expect(await t.db.user.count({ where: { id: account } })).toBe(0);
  });

  it("a forgotten project memory is gone for every member; a project's account is nobody's sign-in", async () => {
    const { ben, cy, projectId } = await team();
    const asBen = await projectAccess(ben, projectId, "write");
    await addProjectMemory(asBen, "The gate code is 4411");
    const m = (await projectMemories(asBen)).find((x) => x.text.includes("gate code"))!;
    expect(m).toMatchObject({ origin: "added", by: "Ben" });
    expect(await refusal(forgetProjectMemory(await projectAccess(cy, projectId, "read"), m.id))).toBe("forbidden");
    await forgetProjectMemory(asBen, m.id);
    expect((await projectMemories(asBen)).map((x) => x.text)).not.toContain("The gate code is 4411");
    const account = await t.db.user.findUniqueOrThrow({ where: { id: asBen.content.userId } });
    expect(account).toMatchObject({ kind: "project", passwordHash: null });
    expect(account.email.endsWith(".invalid")).toBe(true);
  });

  it("a key scoped to the project acts with its owner's role as it is now", async () => {
    const { ben, cy, projectId, owner } = await team();
    const all = ["chat", "memory:read", "memory:write"] as const;
    const keyOf = async (u: UserContext) =>
      (await createApiKey(u, { name: "laptop", scopes: [...all], projectId })).key;
    const call = (key: string, scope: (typeof all)[number]) =>
      authenticateKey(
        t.db,
        new Request("http://mnemo.test/v1/x", { headers: { authorization: `Bearer ${key}` } }),
        scope,
      );
    const [bens, cys] = [await keyOf(ben), await keyOf(cy)];
    // An editor's key writes the project's memory, as Ben.
    const asBen = await call(bens, "memory:write");
    expect(asBen.u).toMatchObject({ actorId: ben.userId, scope: { projectId, general: false } });
    const made = await runMemoryToolCall({ ...asBen.u, reason: () => "test", userMessage: null }, "remember", {
      text: "Seeds live in the blue tin",
    });
    expect(made.result.error).toBeUndefined();
    expect((await projectMemories(owner)).find((m) => m.text.includes("blue tin"))).toMatchObject({ by: "Ben" });
    // A viewer's key reads only, whatever scopes it was made with.
    expect(await refusal(call(cys, "memory:write"))).toMatch(/viewer/);
    expect(await refusal(call(cys, "chat"))).toMatch(/viewer/);
    const asCy = await call(cys, "memory:read");
    expect(asCy.scopes).toEqual(["memory:read"]);
    const refused = await runMemoryToolCall({ ...asCy.u, reason: () => "test", userMessage: null }, "remember", {
      text: "Cy was here",
    });
    expect(refused.result.error).toMatch(/viewer/);
    // Removed: the key stops at once.
    await removeMember(owner, cy.userId);
    expect(await refusal(call(cys, "memory:read"))).toBe("forbidden");
  });

  it("an admin's read of a shared chat is audited for its author and for whoever taught the memories it shows", async () => {
    const { ada, ben, cy, projectId, owner } = await team();
    await addProjectMemory(owner, "The pond pump is cleaned in April");
    const { threadId } = await turn(ben, { content: "Ben's private worry about the pond pump", projectId });
    const file = await saveUpload(await writeContext(ben, { threadId }), "pond.txt", Buffer.from("Pond notes"));
    const asked = await turn(ben, { content: "See the pond notes", threadId, attachments: [file.id] });
    expect(asked.prompt).toContain("Pond notes");
    const admin = await t.db.user.create({ data: { email: `admin-${engine}-${n++}@example.com`, role: "ADMIN" } });
    expect((await userThreadsForAdmin(t.db, ben.userId)).map((x) => x.id)).toContain(threadId);
    const view = await reviewThread(t.db, admin.id, threadId!, "Abuse report #7");
    expect(view.items.map((i) => i.content)).toContain("Ben's private worry about the pond pump");
    expect(view.items.flatMap((i) => i.memoriesUsed.concat(i.alsoGiven ?? [])).map((m) => m.text)).toContain(
      "The pond pump is cleaned in April",
    );
    expect(view.members?.map((m) => m.role)).toEqual(["owner", "editor", "viewer"]);
    const audits = await t.db.auditLog.findMany({ where: { actorId: admin.id, action: "thread.view" } });
    // Ben's chat, and Ada's memory shown in it: each of them finds the read on their own list; Cy, nothing of hers.
    expect(audits.map((a) => a.subjectUserId).sort()).toEqual([ada.userId, ben.userId].sort());
    expect(audits.every((a) => a.threadId === threadId && a.reason === "Abuse report #7")).toBe(true);
    expect(audits.map((a) => a.subjectUserId)).not.toContain(cy.userId);
    // A file of the chat, opened by the admin, is recorded for Ben, not for the project's account.
    await reviewAttachment(t.db, admin.id, file.id, "Abuse report #7");
    const opened = await t.db.auditLog.findFirstOrThrow({ where: { actorId: admin.id, action: "attachment.view" } });
    expect(opened.subjectUserId).toBe(ben.userId);
  });

  it("a private chat in the project is its author's alone: not listed, not readable, not recalled, teaches nothing", async () => {
    const { ada, ben, cy, projectId } = await team();
    mock.script({ system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "Ben fears the wasps" }] } });
    const mine = await turn(ben, {
      content: "Between us: the wasp nest by the shed scares me",
      projectId,
      private: true,
    });
    expect(mine.threadId).toBeDefined();
    expect(await t.db.memory.count({ where: { text: { contains: "wasps" } } })).toBe(0);
    for (const u of [ada, cy]) {
      const { threads } = await listThreads((await projectAccess(u, projectId, "read")).content, {
        project: projectId,
      });
      expect(threads.map((x) => x.id)).not.toContain(mine.threadId);
      expect(await refusal(threadAccess(u, mine.threadId!, "read"))).toBe("not found");
    }
    const view = await threadAccess(ben, mine.threadId!, "read");
    expect((await threadView(view.content, mine.threadId!, view)).thread.shared).toMatchObject({ private: true });
    const asked = await turn(ada, { content: "Is there a wasp nest by the shed?", projectId });
    expect(asked.prompt).not.toContain("scares me");

    // The sidebar's search: each member finds the project's chats beside their own, never another's private chat.
    await turn(cy, { content: "The wasp trap needs new bait" }); // Cy's own general chat
    const found = async (u: UserContext, q: string, project?: string) =>
      (await searchMessages(u, { q, ...(project ? { project } : {}) })).hits.map((h) => h.threadId);
    expect(await found(cy, "wasp nest shed")).toContain(asked.threadId);
    expect(await found(cy, "wasp nest shed")).not.toContain(mine.threadId);
    expect(await found(cy, "wasp")).toHaveLength(4); // Ada's question and its answer, Cy's own and its answer
    expect(await found(cy, "wasp", projectId)).toEqual([asked.threadId, asked.threadId]);
    expect(await found(ben, "scares")).toContain(mine.threadId); // his own private chat
    expect(await found(ada, "scares")).toHaveLength(0);
    // Paging runs through both places, newest first, each hit once.
    const first = await searchMessages(cy, { q: "wasp", limit: 2 });
    const rest = await searchMessages(cy, { q: "wasp", limit: 2, cursor: first.nextCursor! });
    expect(new Set([...first.hits, ...rest.hits].map((h) => h.itemId)).size).toBe(4);
    expect(rest.nextCursor).toBeNull();
  });

  it("two members' memories that contradict each other wait in the editors' inbox", async () => {
    const { ada, ben, cy, projectId } = await team();
    await addProjectMemory(await projectAccess(ada, projectId, "write"), "The gate is painted green");
    await addProjectMemory(await projectAccess(ben, projectId, "write"), "The gate is painted blue");
    const asBen = await projectAccess(ben, projectId, "write");
    const [green, blue] = ["green", "blue"].map((c) =>
      asBen.content.db.memory.findFirstOrThrow({
        where: { userId: asBen.content.userId, text: `The gate is painted ${c}` },
      }),
    );
    // Consolidation marks them (lib/memory/consolidate.ts); here directly.
    await markConflict(t.db, asBen.content.userId, (await green).id, (await blue).id);
    const conflicts = await projectConflicts(await projectAccess(cy, projectId, "read"));
    expect(conflicts.map((c) => [c.a.text, c.b.text])).toEqual([
      ["The gate is painted green", "The gate is painted blue"],
    ]);
    const input = { memoryId: (await green).id, otherId: (await blue).id, keep: "other" as const };
    expect(await refusal(settleProjectConflict(await projectAccess(cy, projectId, "read"), input))).toBe("forbidden");
    await settleProjectConflict(asBen, input);
    expect(await projectConflicts(asBen)).toEqual([]);
    expect((await projectMemories(asBen)).map((m) => m.text)).not.toContain("The gate is painted green");
  });

  it("a member removed while their answer is written: the answer ends with a plain sentence, nothing half-kept", async () => {
    const { ben, projectId, owner } = await team();
    mock.script({ match: "SLOW", content: Array.from({ length: 30 }, (_, i) => `w${i}`).join(" "), chunkDelayMs: 50 });
    let threadId = "";
    const run = async () => {
      for await (const e of runTurn(t.db, ben.userId, { kind: "send", content: "SLOW please", projectId })) {
        if (e.type !== "start") continue;
        threadId = e.threadId;
        setTimeout(() => void removeMember(owner, ben.userId), 200);
      }
    };
    expect(await refusal(run())).toBe(
      "This chat is no longer here: it was deleted while the answer was being written.",
    );
    expect(await t.db.item.count({ where: { threadId } })).toBe(0);
  });

  it("sharing an existing project moves its chats, files and memories under the project's key, all readable by members", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    try {
      const [ada, ben] = [await person("Ada"), await person("Ben")];
      await addMemory(ada, { text: "Ada's own general memory stays hers", source: "explicit" }, "user", "said");
      const p = await createProject(ada, { name: "Allotment", instructions: "Be brief." });
      const chat = await turn(ada, { content: "The allotment plot number is 42", projectId: p.id });
      const scoped = inMemoryScope(ada, exactScope(p.id));
      await addMemory(scoped, { text: "The allotment plot is number 42", source: "explicit" }, "user", "said");
      const file = await saveUpload(ada, "plan.txt", Buffer.from("Beds: onions, leeks, garlic"));
      await bindToMessage(
        t.db,
        ada.userId,
        [file.id],
        chat.threadId!,
        (await t.db.item.findFirstOrThrow({ where: { threadId: chat.threadId!, role: "user" } })).id,
      );
      const sealedBefore = (await t.db.item.findFirstOrThrow({ where: { threadId: chat.threadId!, role: "user" } }))
        .content;

      await shareExistingProject(ada, p.id);
      expect(await refusal(shareExistingProject(ada, p.id))).toMatch(/already shared/);
      const owner = await projectAccess(ada, p.id, "own");
      expect(owner).toMatchObject({ shared: true, role: "owner" });
      await inviteMember(owner, {
        email: (await t.db.user.findUniqueOrThrow({ where: { id: ben.userId } })).email,
        role: "viewer",
      });
      const asBen = await projectAccess(ben, p.id, "read");
      // Re-sealed: not the bytes it had under Ada's key, and Ada's own key no longer opens it.
      const moved = await t.db.item.findFirstOrThrow({ where: { threadId: chat.threadId!, role: "user" } });
      expect(moved.userId).toBe(asBen.content.userId);
      expect(moved.content).not.toBe(sealedBefore);
      expect(ada.cipher.open(moved.content)).not.toContain("42");
      // Ben reads the chat, its file and the memory, marked as Ada's.
      const access = await threadAccess(ben, chat.threadId!, "read");
      const view = await threadView(access.content, chat.threadId!, access);
      expect(view.items.map((i) => i.content)).toContain("The allotment plot number is 42");
      expect(view.items.flatMap((i) => i.attachments.map((a) => a.name))).toContain("plan.txt");
      expect((await projectMemories(asBen)).find((m) => m.text.includes("plot is number 42"))).toMatchObject({
        by: "Ada",
      });
      expect((await getProject(ben, p.id)).name).toBe("Allotment");
      // Ada's general memory stayed hers; her own memory list no longer holds the project's.
      expect(await t.db.memory.count({ where: { userId: ada.userId } })).toBe(1);
      // Her next turn in the chat writes under the project's key, and finds the memory by its words.
      const next = await turn(ada, { content: "Which plot number is the allotment?", threadId: chat.threadId });
      expect(next.prompt).toContain("The allotment plot is number 42");
    } finally {
      setEncryptionKeys(undefined);
    }
  });

  it("in the 'shared' mode a member's own memory helps their own answer alone, recorded on their own account", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    try {
      const { ada, ben, projectId, owner } = await team();
      await addMemory(ada, { text: "Ada is allergic to bee stings", source: "explicit" }, "user", "said");
      await addMemory(ben, { text: "Ben keeps the bee suit in his van", source: "explicit" }, "user", "said");
      await addProjectMemory(owner, "The bee hives stand by the pond");
      // The mode is the owner's to set: an editor is refused.
      expect(await refusal(updateProject(ben, { id: projectId, memoryMode: "shared" }))).toBe("forbidden");
      const off = await turn(ada, { content: "Can I check the bee hives?", projectId });
      expect(off.prompt).toContain("bee hives stand by the pond");
      expect(off.prompt).not.toContain("allergic to bee stings");

      await updateProject(ada, { id: projectId, memoryMode: "shared" });
      mock.script({ content: "Mind the bee stings you are allergic to [memory: Ada is allergic]." });
      const on = await turn(ada, { content: "Can I check the bee hives today?", projectId });
      expect(on.prompt).toContain("bee hives stand by the pond");
      expect(on.prompt).toContain("Ada is allergic to bee stings");
      expect(on.prompt).toContain("From the asking member's own memory");
      expect(on.prompt).not.toContain("bee suit in his van"); // only the asker's own
      const done = on.events.find((e) => e.type === "done") as {
        memoriesUsed: Array<{ text: string; mine?: boolean }>;
      };
      expect(done.memoriesUsed).toContainEqual(
        expect.objectContaining({ text: "Ada is allergic to bee stings", mine: true }),
      );

      // Ben's answer in the project gets his own memory, never Ada's.
      const bens = await turn(ben, { content: "Where is the bee suit kept for the hives?", projectId });
      expect(bens.prompt).toContain("bee suit in his van");
      expect(bens.prompt).not.toContain("allergic to bee stings");

      // Ada sees which of her own memories the answer used; Ben reading her chat sees none of them.
      const mineView = await threadAccess(ada, on.threadId!, "read");
      const hers = (await threadView(mineView.content, on.threadId!, mineView)).items.flatMap((i) => i.memoriesUsed);
      expect(hers).toContainEqual(expect.objectContaining({ text: "Ada is allergic to bee stings", mine: true }));
      const benView = await threadAccess(ben, on.threadId!, "read");
      const seen = await threadView(benView.content, on.threadId!, benView);
      const shownToBen = seen.items.flatMap((i) => [...i.memoriesUsed, ...(i.alsoGiven ?? [])].map((m) => m.text));
      expect(shownToBen.join("\n")).not.toContain("allergic");

      // Her memory stayed hers: not in the project's list, its use and its send on her account, not the project's.
      const asBen = await projectAccess(ben, projectId, "read");
      expect((await projectMemories(asBen)).map((m) => m.text).join("\n")).not.toContain("allergic");
      const allergy = await t.db.memory.findFirstOrThrow({ where: { userId: ada.userId } });
      expect(allergy.useCount).toBe(1);
      expect(await t.db.memoryUse.count({ where: { memoryId: allergy.id, userId: ada.userId } })).toBe(1);
      const projectSends = await t.db.memorySend.findMany({ where: { userId: asBen.content.userId } });
      expect(projectSends.flatMap((s) => s.memoryIds)).not.toContain(allergy.id);
      const adaSends = await t.db.memorySend.findMany({ where: { userId: ada.userId } });
      expect(adaSends.flatMap((s) => s.memoryIds)).toContain(allergy.id);
      // The same through /v1 with Ben's key scoped to the project: his own memory, never Ada's.
      const key = (await createApiKey(ben, { name: "laptop", scopes: ["chat"], projectId })).key;
      const caller = await authenticateKey(
        t.db,
        new Request("http://mnemo.test/v1/x", { headers: { authorization: `Bearer ${key}` } }),
        "chat",
      );
      const before = mock.chatRequests().length;
      await completeOnce(caller, {
        model: "mock-chat",
        messages: [{ role: "user", content: "Where is the bee suit for the hives?" }],
      } as Parameters<typeof completeOnce>[1]);
      const v1 = JSON.stringify(mock.chatRequests().slice(before).at(-1)?.body.messages);
      expect(v1).toContain("bee suit in his van");
      expect(v1).toContain("bee hives stand by the pond");
      // (Ada's answer in her chat is the project's to read; her memory itself is not.)
      expect(v1).not.toContain("Ada is allergic to bee stings");
      // Ada rates her answer: the lesson is the project's, and her own memory is not shown to the memory model for it.
      const answerId = (on.events.find((e) => e.type === "done") as { item: { id: string } }).item.id;
      const benRates = answerContext(ben, answerId).then((c) => rateAnswer(c, { itemId: answerId, rating: -1 }));
      expect(await refusal(benRates)).toBe("forbidden");
      mock.script({
        match: "Feedback on an answer",
        json: { lesson: { text: "Answers here stay brief", kind: "preference" } },
      });
      await rateAnswer(await answerContext(ada, answerId), { itemId: answerId, rating: -1, comment: "Too wordy" });
      await runDueJobs(t.db);
      const distil = mock.chatRequests().find((r) => JSON.stringify(r.body).includes("Feedback on an answer"));
      expect(JSON.stringify(distil?.body)).toContain("Too wordy");
      expect(JSON.stringify(distil?.body)).not.toContain("Ada is allergic to bee stings");
      const lesson = await t.db.memory.findFirstOrThrow({ where: { sourceFeedbackId: { not: null }, projectId } });
      expect(lesson.userId).toBe(asBen.content.userId);
      expect(await t.db.memory.count({ where: { userId: ada.userId } })).toBe(1);
      // Nothing of it was learned into the project from the answer that used it.
      expect(await t.db.memory.count({ where: { projectId, text: { contains: "allergic" } } })).toBe(0);
    } finally {
      setEncryptionKeys(undefined);
    }
  });

  it("a file attached in a shared project: sealed with its key, sent by its uploader alone, opened by every member", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    try {
      const { ada, ben, cy, projectId } = await team();
      const inProject = await writeContext(ben, { projectId });
      const plan = await saveUpload(inProject, "beds.txt", Buffer.from("Bed 3: carrots and beetroot"));
      const spare = await saveUpload(inProject, "spare.txt", Buffer.from("Spare seeds list"));
      // Another member can neither send nor remove Ben's draft, nor open it.
      expect(await refusal(turn(ada, { content: "Mine now", projectId, attachments: [plan.id] }))).toMatch(/gone/);
      expect(await refusal(fileContext(ada, plan.id))).toBe("not found");
      const sent = await turn(ben, { content: "What is in bed 3?", projectId, attachments: [plan.id] });
      expect(sent.prompt).toContain("carrots and beetroot");
      const row = await t.db.attachment.findUniqueOrThrow({ where: { id: plan.id } });
      expect(row.userId).toBe(inProject.userId); // the project's, sealed with its key
      expect(ben.cipher.open(row.text!)).not.toContain("carrots");
      // Sent, every member who reads the chat opens it (Cy only reads).
      for (const u of [ada, cy])
        expect((await openAttachment(await fileContext(u, plan.id), plan.id)).text).toContain("carrots");
      const outsider = await person("Dee");
      expect(await refusal(fileContext(outsider, plan.id))).toBe("not found");
      // Ben leaves: his unsent draft goes with him.
      await leaveProject(await projectAccess(ben, projectId, "read"));
      expect(await t.db.attachment.count({ where: { id: spare.id } })).toBe(0);
    } finally {
      setEncryptionKeys(undefined);
    }
  });

  it("an invitation for an address without an account waits; the account made for it joins when the mode vouches", async () => {
    const { projectId, owner } = await team();
    const config = getConfig() as { registration: string };
    const before = config.registration;
    const addr = (who: string) => `${who}-${engine}-${n++}@example.com`;
    const joined = async (email: string) =>
      (await listMembers(owner)).some((m) => m.email === email && m.role === "viewer");
    try {
      // Open registration: anyone may register any address, so a password account does not take the place; an
      // address a sign-in provider verified does.
      config.registration = "open";
      const [fay, gus] = [addr("fay"), addr("gus")];
      expect(await inviteMember(owner, { email: fay, role: "viewer" })).toMatch(/waits for 30 days/);
      await inviteMember(owner, { email: gus, role: "viewer" });
      expect((await listInvites(owner)).map((i) => i.email)).toEqual([fay, gus]);
      await createUser(t.db, { email: fay, passwordHash: "x" });
      expect(await joined(fay)).toBe(false);
      await createUser(t.db, { email: gus, emailVerified: new Date() });
      expect(await joined(gus)).toBe(true);
      // Invite mode: an administrator's invitation vouched for the address.
      config.registration = "invite";
      const hal = addr("hal");
      expect(await inviteMember(owner, { email: hal, role: "viewer" })).toMatch(/ask an administrator/);
      await createUser(t.db, { email: hal, passwordHash: "x" });
      expect(await joined(hal)).toBe(true);
      expect(
        (await projectHistory(owner)).some((h) => h.kind === "joined" && h.actor === "Ada" && h.subject !== "Ada"),
      ).toBe(true);
      // Withdrawn, or expired: nobody joins.
      config.registration = "closed";
      const [ivy, jon] = [addr("ivy"), addr("jon")];
      await inviteMember(owner, { email: ivy, role: "viewer" });
      await inviteMember(owner, { email: jon, role: "viewer" });
      await cancelInvite(owner, ivy);
      await t.db.projectInvite.updateMany({ where: { email: jon }, data: { expiresAt: new Date(Date.now() - 1000) } });
      await createUser(t.db, { email: ivy });
      await createUser(t.db, { email: jon });
      expect(await joined(ivy)).toBe(false);
      expect(await joined(jon)).toBe(false);
      expect(await t.db.projectInvite.count({ where: { email: { in: [ivy, jon, hal, gus] } } })).toBe(0);
      // A viewer cannot invite or withdraw.
      const kim = addr("kim");
      await inviteMember(owner, { email: kim, role: "editor" });
      const viewer = await projectAccess(
        await userContext(t.db, (await t.db.user.findFirstOrThrow({ where: { email: hal } })).id),
        projectId,
        "read",
      );
      expect(await refusal(cancelInvite(viewer, kim))).toBe("forbidden");
      expect(await refusal(inviteMember(viewer, { email: addr("lea"), role: "viewer" }))).toBe("forbidden");
      // Fay, who registered with a password, is invited again now that she has an account: she joins, and her
      // waiting invitation is used up.
      await inviteMember(owner, { email: fay, role: "viewer" });
      expect(await joined(fay)).toBe(true);
      expect((await listInvites(owner)).map((i) => i.email)).toEqual([kim]);
    } finally {
      config.registration = before;
    }
  });

  it("a member moves one of their own chats into the project: re-sealed with its key, read by the others", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    try {
      const { ada, ben, cy, projectId } = await team();
      mock.script({ system: EXTRACTION, json: { decisions: [{ op: "ADD", text: "Ben grows chillies" }] } });
      const own = await turn(ben, { content: "I grow chillies on the balcony" });
      const file = await saveUpload(ben, "chillies.txt", Buffer.from("Scotch bonnet, jalapeno"));
      const q = await t.db.item.findFirstOrThrow({ where: { threadId: own.threadId!, role: "user" } });
      await bindToMessage(t.db, ben.userId, [file.id], own.threadId!, q.id);
      // Cy only reads; Dee is not in the project.
      const cysChat = await turn(cy, { content: "My own notes" });
      expect(await refusal(moveChat(cy, cysChat.threadId!, projectId))).toBe("forbidden");
      expect(await refusal(moveChat(await person("Dee"), own.threadId!, projectId))).toBe("not found");
      expect(await refusal(moveChat(ada, own.threadId!, projectId))).toBe("not found"); // not Ada's chat

      await moveChat(ben, own.threadId!, projectId);
      const moved = await t.db.thread.findUniqueOrThrow({ where: { id: own.threadId! } });
      expect(moved).toMatchObject({ projectId, authorId: ben.userId });
      const item = await t.db.item.findFirstOrThrow({ where: { threadId: own.threadId!, role: "user" } });
      expect(item.userId).toBe(moved.userId);
      expect(ben.cipher.open(item.content)).not.toContain("chillies"); // Ben's own key no longer opens it
      const access = await threadAccess(ada, own.threadId!, "read");
      const view = await threadView(access.content, own.threadId!, access);
      expect(view.items.map((i) => i.content)).toContain("I grow chillies on the balcony");
      expect(view.thread.shared).toMatchObject({ author: "Ben", mayContinue: false });
      expect((await openAttachment(await fileContext(ada, file.id), file.id)).text).toContain("jalapeno");
      // What it taught Ben stays his own; he goes on in the chat under the project's key.
      expect((await t.db.memory.findFirstOrThrow({ where: { userId: ben.userId } })).projectId).toBeNull();
      const next = await turn(ben, { content: "And the chilli seeds?", threadId: own.threadId });
      expect(next.prompt).toContain("I grow chillies on the balcony");
      expect((await searchMessages(ada, { q: "balcony" })).hits.map((h) => h.threadId)).toContain(own.threadId);
    } finally {
      setEncryptionKeys(undefined);
    }
  });

  it("a member moves one of their own memories into the project: re-sealed, added by them, gone from their own", async () => {
    setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
    try {
      const { ada, ben, cy, projectId, owner } = await team();
      const mine = await addMemory(
        ben,
        { text: "The water butt leaks at the tap", source: "explicit" },
        "user",
        "said",
      );
      const other = await addMemory(ben, { text: "Ben's own allotment is plot 9", source: "explicit" }, "user", "said");
      await markConflict(t.db, ben.userId, other.id, mine.id);
      const cysOwn = await addMemory(cy, { text: "Cy's note", source: "explicit" }, "user", "said");
      expect(await refusal(moveMemoryTo(cy, cysOwn.id, projectId))).toBe("forbidden"); // a viewer
      expect(await refusal(moveMemoryTo(ada, mine.id, projectId))).toBe("not found"); // not Ada's

      await moveMemoryTo(ben, mine.id, projectId);
      const row = await t.db.memory.findUniqueOrThrow({ where: { id: mine.id } });
      expect(row).toMatchObject({ projectId, addedById: ben.userId, conflictWithId: null });
      expect(row.userId).not.toBe(ben.userId);
      expect(ben.cipher.open(row.text)).not.toContain("water butt"); // Ben's own key no longer opens it
      expect((await t.db.memory.findUniqueOrThrow({ where: { id: other.id } })).conflictWithId).toBeNull();
      expect((await projectMemories(owner)).find((m) => m.id === mine.id)).toMatchObject({
        text: "The water butt leaks at the tap",
        by: "Ben",
      });
      expect(await t.db.memory.count({ where: { userId: ben.userId, id: mine.id } })).toBe(0);
      const asked = await turn(ada, { content: "Which tap does the water butt leak at?", projectId });
      expect(asked.prompt).toContain("The water butt leaks at the tap");
    } finally {
      setEncryptionKeys(undefined);
    }
  });
});
