// The shared projects' authorization matrix: every action and route that reaches a shared project, called by its
// owner, an editor, a viewer and someone outside it, against a real database, with the expected allow or deny for
// each (lib/projects/access.ts is the rule). Only the session is simulated; the actions, their checks and the
// database are the real ones. A cell also fails when someone outside sees the project's words.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const state = vi.hoisted(() => ({
  db: null as unknown,
  session: null as null | { id: string; role: "USER" | "ADMIN"; email: string; authAt: number },
}));
vi.mock("@/lib/db/client", () => ({ getDb: async () => state.db, getDatabase: async () => ({ prisma: state.db }) }));
vi.mock("@/auth", () => ({
  auth: async () => (state.session ? { user: state.session } : null),
  signIn: async () => undefined,
  signOut: async () => undefined,
  oauthProviders: () => [],
  handlers: { GET: async () => new Response("{}"), POST: async () => new Response("{}") },
}));
vi.mock("@/lib/auth/jwt-session", () => ({
  jwtUser: async () => (state.session ? { id: state.session.id, role: state.session.role } : null),
}));
vi.mock("next-auth", () => ({
  AuthError: class AuthError extends Error {},
  CredentialsSignin: class CredentialsSignin extends Error {},
}));
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
vi.mock("next/headers", () => ({ headers: async () => new Headers({ "x-forwarded-for": "203.0.113.9" }) }));
vi.mock("next/server", async (orig) => ({ ...(await orig<object>()), after: () => undefined }));

import { createTestDb, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { userContext } from "@/lib/user-context";
import { createSharedProject, inviteMember } from "@/lib/projects/members";
import { projectAccess } from "@/lib/projects/access";
import { createThread } from "@/lib/chat/threads";
import { appendItems } from "@/lib/memory/session";
import { addMemory } from "@/lib/memory/store";
import { bindToMessage, saveUpload } from "@/lib/attachments/store";
import { markConflict } from "@/lib/memory/conflicts";
import { ForbiddenError, UnauthorizedError } from "@/lib/errors";
import { trackGeneration, untrackGeneration } from "@/lib/chat/turn";

type Role = "owner" | "editor" | "viewer" | "outsider";
type Verdict = "allow" | "deny";
type Fixture = {
  people: Record<Role, { id: string; email: string }>;
  projectId: string;
  /** The owner's chat and the editor's (each titled with the secret), and the editor's answer being written. */
  ownersThread: string;
  /** The answer in the owner's chat. */
  ownersAnswer: string;
  /** A file sent in the owner's chat, and a file the editor uploaded to the project and has not sent. */
  ownersFile: string;
  editorsDraft: string;
  editorsThread: string;
  streaming: string;
  live: AbortController;
  memoryId: string;
  pendingId: string;
  /** A memory in conflict with memoryId. */
  opposite: string;
  secret: string;
};
type Mod = Record<string, (...a: never[]) => unknown>;
type Entry = { file: string; call: (m: Mod, fx: Fixture) => unknown; expect: Record<Role, Verdict>; stops?: boolean };

const v = (owner: Verdict, editor: Verdict, viewer: Verdict): Record<Role, Verdict> => ({
  owner,
  editor,
  viewer,
  outsider: "deny",
});
const MEMBERS = v("allow", "allow", "allow");
const WRITERS = v("allow", "allow", "deny");
const OWNER = v("allow", "deny", "deny");
const OWNERS_CHAT = v("allow", "deny", "deny");
const EDITORS_CHAT = v("deny", "allow", "deny");
const P = "app/(app)/p/actions.ts";
const C = "app/(app)/c/actions.ts";
const json = (body: unknown) =>
  new Request("http://mnemo.test/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json", origin: "http://mnemo.test", host: "mnemo.test" },
    body: JSON.stringify(body),
  });

const MATRIX: Record<string, Entry> = {
  // Anyone may ask for a project's chats; someone outside gets an empty list (the leak check reads it).
  listChats: {
    file: C,
    call: (m, fx) => m.listThreadsAction({ project: fx.projectId } as never),
    expect: { ...MEMBERS, outsider: "allow" },
  },
  loadThread: { file: C, call: (m, fx) => m.loadThreadAction(fx.ownersThread as never), expect: MEMBERS },
  renameThread: {
    file: C,
    call: (m, fx) => m.renameThreadAction(fx.ownersThread as never, "Renamed" as never),
    expect: OWNERS_CHAT,
  },
  undoTurn: { file: C, call: (m, fx) => m.undoTurnAction(fx.editorsThread as never), expect: EDITORS_CHAT },
  // Files: uploaded by those who chat in the project, opened by every member, a draft removed by its uploader alone.
  uploadToProject: {
    file: "app/api/attachments/route.ts",
    call: (m, fx) =>
      m.POST(
        new Request(`http://mnemo.test/api/attachments?name=notes.txt&projectId=${fx.projectId}`, {
          method: "POST",
          headers: { origin: "http://mnemo.test", host: "mnemo.test", "content-length": "5" },
          body: "notes",
        }) as never,
      ),
    expect: WRITERS,
  },
  openFile: {
    file: "app/api/attachments/[id]/route.ts",
    call: (m, fx) =>
      m.GET(
        new Request(`http://mnemo.test/api/attachments/${fx.ownersFile}?as=text`) as never,
        {
          params: Promise.resolve({ id: fx.ownersFile }),
        } as never,
      ),
    expect: MEMBERS,
  },
  removeEditorsDraft: {
    file: "app/api/attachments/[id]/route.ts",
    call: (m, fx) =>
      m.DELETE(
        new Request(`http://mnemo.test/api/attachments/${fx.editorsDraft}`, {
          method: "DELETE",
          headers: { origin: "http://mnemo.test", host: "mnemo.test" },
        }) as never,
        { params: Promise.resolve({ id: fx.editorsDraft }) } as never,
      ),
    expect: v("deny", "allow", "deny"),
  },
  // A rating teaches the project a lesson: its author's to give.
  rateAnswer: {
    file: C,
    call: (m, fx) => m.rateAnswerAction({ itemId: fx.ownersAnswer, rating: -1, comment: "too long" } as never),
    expect: OWNERS_CHAT,
  },
  clearThread: { file: C, call: (m, fx) => m.clearThreadAction(fx.ownersThread as never), expect: OWNERS_CHAT },
  deleteThread: { file: C, call: (m, fx) => m.deleteThreadAction(fx.editorsThread as never), expect: EDITORS_CHAT },
  setThreadModel: {
    file: C,
    call: (m, fx) => m.setThreadModelAction(fx.ownersThread as never, null as never),
    expect: OWNERS_CHAT,
  },
  continueOwnersChat: {
    file: "app/api/chat/route.ts",
    call: (m, fx) => m.POST(json({ kind: "send", threadId: fx.ownersThread, content: "more" }) as never),
    expect: OWNERS_CHAT,
  },
  newChatInProject: {
    file: "app/api/chat/route.ts",
    call: (m, fx) => m.POST(json({ kind: "send", projectId: fx.projectId, content: "hello" }) as never),
    expect: WRITERS,
  },
  stopEditorsAnswer: {
    file: "app/api/chat/stop/route.ts",
    call: (m, fx) =>
      m.POST(
        new Request("http://mnemo.test/api/chat/stop", {
          method: "POST",
          headers: { "content-type": "application/json", origin: "http://mnemo.test", host: "mnemo.test" },
          body: JSON.stringify({ itemId: fx.streaming }),
        }) as never,
      ),
    expect: EDITORS_CHAT,
    stops: true,
  },
  updateProject: {
    file: P,
    call: (m, fx) => m.updateProjectAction({ id: fx.projectId, name: "Renamed" } as never),
    expect: WRITERS,
  },
  // Whether members' own memories help their own answers is the owner's choice.
  setMemoryMode: {
    file: P,
    call: (m, fx) => m.updateProjectAction({ id: fx.projectId, memoryMode: "shared" } as never),
    expect: OWNER,
  },
  // An invitation waiting for an address without an account: withdrawn by those who may invite.
  cancelInvite: {
    file: P,
    call: (m, fx) => m.cancelInviteAction(fx.projectId as never, `waiting-${fx.secret}@example.com` as never),
    expect: WRITERS,
  },
  deleteProject: { file: P, call: (m, fx) => m.deleteProjectAction(fx.projectId as never), expect: OWNER },
  invite: {
    file: P,
    call: (m, fx) =>
      m.inviteMemberAction(fx.projectId as never, { email: fx.people.outsider.email, role: "viewer" } as never),
    expect: WRITERS,
  },
  inviteAsOwner: {
    file: P,
    call: (m, fx) =>
      m.inviteMemberAction(fx.projectId as never, { email: fx.people.outsider.email, role: "owner" } as never),
    expect: v("deny", "deny", "deny"),
  },
  changeRole: {
    file: P,
    call: (m, fx) => m.changeRoleAction(fx.projectId as never, fx.people.viewer.id as never, "editor" as never),
    expect: OWNER,
  },
  transfer: {
    file: P,
    call: (m, fx) => m.transferOwnershipAction(fx.projectId as never, fx.people.editor.id as never),
    expect: OWNER,
  },
  remove: {
    file: P,
    call: (m, fx) => m.removeMemberAction(fx.projectId as never, fx.people.viewer.id as never),
    expect: OWNER,
  },
  // The owner cannot leave (they give the project away or delete it).
  leave: { file: P, call: (m, fx) => m.leaveProjectAction(fx.projectId as never), expect: v("deny", "allow", "allow") },
  keepLeaversChats: {
    file: P,
    call: (m, fx) => m.setKeepLeaversChatsAction(fx.projectId as never, true as never),
    expect: OWNER,
  },
  review: { file: P, call: (m, fx) => m.setProjectReviewAction(fx.projectId as never, true as never), expect: OWNER },
  addMemory: {
    file: P,
    call: (m, fx) => m.addProjectMemoryAction(fx.projectId as never, "The gate sticks" as never),
    expect: WRITERS,
  },
  forgetMemory: {
    file: P,
    call: (m, fx) => m.forgetProjectMemoryAction(fx.projectId as never, fx.memoryId as never),
    expect: WRITERS,
  },
  approveMemory: {
    file: P,
    call: (m, fx) => m.reviewProjectMemoryAction(fx.projectId as never, fx.pendingId as never, true as never),
    expect: WRITERS,
  },
  settleConflict: {
    file: P,
    call: (m, fx) =>
      m.settleProjectConflictAction(
        fx.projectId as never,
        { memoryId: fx.memoryId, otherId: fx.opposite, keep: "memory" } as never,
      ),
    expect: WRITERS,
  },
  keyForProject: {
    file: "app/(app)/settings/keys/actions.ts",
    call: (m, fx) =>
      m.createApiKeyAction({ name: "laptop", scopes: ["memory:read"], projectId: fx.projectId } as never),
    expect: MEMBERS,
  },
};

const DENIED = /not found|sign in|access|viewer|only the|own this project|started this chat|invalid/i;

describe("shared projects: authorization by role", () => {
  let t: TestDb;
  let mock: MockLlm;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb("pglite");
    state.db = t.db;
    mock = await startMockLlm();
    const first = await t.db.user.create({ data: { email: "first-admin-shared@example.com", role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, first.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => {
    await mock?.close();
    await t?.close();
  });

  async function fixture(): Promise<Fixture> {
    const k = n++;
    const secret = `teamsecret${k}x`;
    const mk = (who: Role) => t.db.user.create({ data: { email: `${who}-${k}@example.com`, name: who } });
    const people = {
      owner: await mk("owner"),
      editor: await mk("editor"),
      viewer: await mk("viewer"),
      outsider: await mk("outsider"),
    };
    const owner = await userContext(t.db, people.owner.id);
    const { id: projectId } = await createSharedProject(owner, { name: `Team ${secret}` });
    const a = await projectAccess(owner, projectId, "own");
    await inviteMember(a, { email: people.editor.email, role: "editor" });
    await inviteMember(a, { email: people.viewer.email, role: "viewer" });
    const asEditor = await projectAccess(await userContext(t.db, people.editor.id), projectId, "write");
    const chat = async (u: typeof a.content, title: string) => {
      const th = await createThread(u, { title, projectId });
      const [, answer] = await appendItems(
        t.db,
        th.id,
        [
          { role: "user", content: `question ${secret}` },
          { role: "assistant", content: "answer" },
        ],
        { cipher: u.cipher },
      );
      return [th.id, answer.id] as const;
    };
    const [ownersThread, ownersAnswer] = await chat(a.content, `Owner's ${secret}`);
    const [editorsThread] = await chat(asEditor.content, `Editor's ${secret}`);
    const [, s] = await appendItems(
      t.db,
      editorsThread,
      [
        { role: "user", content: "more" },
        { role: "assistant", status: "streaming" },
      ],
      { cipher: asEditor.content.cipher },
    );
    const ownersFile = await saveUpload(a.content, "plan.txt", Buffer.from(`Plan ${secret}`));
    const ownersQuestion = await t.db.item.findFirstOrThrow({ where: { threadId: ownersThread, role: "user" } });
    await bindToMessage(t.db, a.content.userId, [ownersFile.id], ownersThread, ownersQuestion.id, people.owner.id);
    const editorsDraft = await saveUpload(asEditor.content, "draft.txt", Buffer.from(`Draft ${secret}`));
    const memory = await addMemory(a.content, { text: `Memory ${secret}`, source: "manual" }, "user", "t");
    const pending = await addMemory(
      a.content,
      { text: `Pending ${secret}`, source: "inferred", status: "pending" },
      "model",
      "t",
    );
    const opposite = await addMemory(a.content, { text: `Opposite ${secret}`, source: "manual" }, "user", "t");
    await markConflict(t.db, a.content.userId, memory.id, opposite.id);
    return {
      opposite: opposite.id,
      people,
      projectId,
      ownersThread,
      ownersAnswer,
      ownersFile: ownersFile.id,
      editorsDraft: editorsDraft.id,
      editorsThread,
      streaming: s.id,
      live: trackGeneration(s.id, people.editor.id),
      memoryId: memory.id,
      pendingId: pending.id,
      secret,
    };
  }

  async function run(entry: Entry, role: Role) {
    const fx = await fixture();
    const who = fx.people[role];
    state.session = { id: who.id, email: who.email, role: "USER", authAt: Date.now() };
    const mod = (await import(/* @vite-ignore */ `@/${entry.file.replace(/\.ts$/, "")}`)) as Mod;
    let verdict: Verdict = "allow";
    let shown = "";
    try {
      const r = await entry.call(mod, fx);
      if (r instanceof Response) {
        shown = await r.text();
        if ([401, 403, 404].includes(r.status)) verdict = "deny";
        else if (entry.stops && !fx.live.signal.aborted) verdict = "deny";
      } else {
        shown = JSON.stringify(r ?? null);
        const res = r as { ok?: boolean; error?: string } | undefined;
        if (res?.ok === false && DENIED.test(res.error ?? "")) verdict = "deny";
        else if (res?.ok === false) throw new Error(`unexpected failure: ${res.error}`);
      }
    } catch (e) {
      if (e instanceof UnauthorizedError || e instanceof ForbiddenError) verdict = "deny";
      else throw e;
    }
    untrackGeneration(fx.streaming);
    return { verdict, leaked: role === "outsider" && shown.includes(fx.secret), stopped: fx.live.signal.aborted };
  }

  for (const [name, entry] of Object.entries(MATRIX)) {
    it(`${name}: ${Object.entries(entry.expect)
      .map(([r, x]) => `${r} ${x}`)
      .join(", ")}`, async () => {
      for (const role of ["owner", "editor", "viewer", "outsider"] as Role[]) {
        const got = await run(entry, role);
        expect({ role, verdict: got.verdict, leaked: got.leaked }).toEqual({
          role,
          verdict: entry.expect[role],
          leaked: false,
        });
        if (entry.stops)
          expect({ role, stopped: got.stopped }).toEqual({ role, stopped: entry.expect[role] === "allow" });
      }
    });
  }
});
