// The authorization matrix: every server action and route handler, called as
// {owner, another user, admin, signed out}, against a real database, with the
// expected allow or deny for each. The list is checked against the app's files:
// a new action or route without an entry fails this test.
//
// Only the session is simulated (Auth.js's `auth()` returns the chosen user);
// the actions, their checks and the database are the real ones.
import { bindToMessage, saveUpload } from "@/lib/attachments/store";
import { ForbiddenError, UnauthorizedError } from "@/lib/errors";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const state = vi.hoisted(() => ({
  db: null as unknown,
  session: null as null | { id: string; role: "USER" | "ADMIN"; email: string; authAt: number },
}));

vi.mock("@/lib/db/client", () => ({
  getDb: async () => state.db,
  getDatabase: async () => ({ prisma: state.db, database: { activity: null } }),
}));
vi.mock("@/auth", () => ({
  auth: async () => (state.session ? { user: state.session } : null),
  signIn: async () => undefined,
  signOut: async () => undefined,
  oauthProviders: () => [{ id: "github", name: "GitHub" }],
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
import { hashPassword } from "@/lib/auth/password";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { appendItems } from "@/lib/memory/session";
import { addMemory } from "@/lib/memory/store";
import { createThread } from "@/lib/chat/threads";
import { createProject } from "@/lib/projects/projects";
import { createSharedProject, inviteMember } from "@/lib/projects/members";
import { projectAccess } from "@/lib/projects/access";
import { markConflict } from "@/lib/memory/conflicts";
import { createApiKey } from "@/lib/keys/api-keys";
import { trackGeneration, untrackGeneration } from "@/lib/chat/turn";

type Subject = "owner" | "other" | "admin" | "anon";
type Verdict = "allow" | "deny";
type Fixture = {
  owner: { id: string; email: string };
  other: { id: string; email: string };
  admin: { id: string; email: string };
  threadId: string;
  userItemId: string;
  answerItemId: string;
  streamingItemId: string;
  /** The owner's answer as a generation running in this process (aborted = stopped). */
  live: AbortController;
  memoryId: string;
  /** The owner's project, named and instructed with the secret. */
  projectId: string;
  /** A shared project the owner owns (named with the secret), with one editor, and a memory taught by the owner. */
  sharedProjectId: string;
  memberId: string;
  sharedMemoryId: string;
  /** A memory of the shared project in conflict with sharedMemoryId. */
  conflictWithId: string;
  /** The owner's API key. */
  apiKeyId: string;
  /** The owner's unsent attachment (its text holds the secret). */
  attachmentId: string;
  /** The owner's attachment sent with their question (its text holds the secret). */
  sentAttachmentId: string;
  secret: string;
};
type Entry = {
  call: (m: Record<string, (...a: never[]) => unknown>, fx: Fixture) => unknown;
  expect: Record<Subject, Verdict>;
  /** Whether the result shows the owner's data (allowed only for the owner, and admins on audited paths). */
  mayShowOwnerData?: Subject[];
  /** A result that is a denial in disguise (e.g. { stopped: false }). */
  deniedWhen?: (body: unknown) => boolean;
  /** Stops the owner's answer running in this process when allowed (every other cell must leave it running). */
  stopsAnswer?: boolean;
  /** Reached its work, which may fail for reasons that are not access (e.g. no model server). */
  mayFail?: boolean;
};

const OWNER_ONLY: Record<Subject, Verdict> = { owner: "allow", other: "deny", admin: "deny", anon: "deny" };
const SIGNED_IN: Record<Subject, Verdict> = { owner: "allow", other: "allow", admin: "allow", anon: "deny" };
const ADMIN_ONLY: Record<Subject, Verdict> = { owner: "deny", other: "deny", admin: "allow", anon: "deny" };
const PUBLIC: Record<Subject, Verdict> = { owner: "allow", other: "allow", admin: "allow", anon: "allow" };
/** Only for a caller with the data folder's secret (lib/ops/endpoint.ts): no session reaches it. */
const NOBODY: Record<Subject, Verdict> = { owner: "deny", other: "deny", admin: "deny", anon: "deny" };
const form = (o: Record<string, string>) => {
  const f = new FormData();
  for (const [k, v] of Object.entries(o)) f.set(k, v);
  return f;
};
const PASSWORD = "correct horse battery";

const ACTIONS: Record<string, Record<string, Entry>> = {
  "app/(auth)/actions.ts": {
    signInAction: {
      call: (m) =>
        m.signInAction({} as never, form({ email: "x@example.com", password: "whatever-password" }) as never),
      expect: PUBLIC,
    },
    registerAction: {
      call: (m) =>
        m.registerAction(
          {} as never,
          form({ email: `new-${Math.random()}@example.com`, password: "long enough password" }) as never,
        ),
      expect: PUBLIC,
    },
    forgotPasswordAction: {
      call: (m) => m.forgotPasswordAction({} as never, form({ email: "x@example.com" }) as never),
      expect: PUBLIC,
    },
    resetPasswordAction: {
      call: (m) =>
        m.resetPasswordAction(
          {} as never,
          form({ token: "made-up", next: "long enough password", confirm: "long enough password" }) as never,
        ),
      expect: PUBLIC,
    },
    oauthSignInAction: { call: (m) => m.oauthSignInAction(form({ provider: "github" }) as never), expect: PUBLIC },
    signOutAction: { call: (m) => m.signOutAction(), expect: PUBLIC },
  },
  "app/(app)/c/actions.ts": {
    listThreadsAction: { call: (m) => m.listThreadsAction({} as never), expect: SIGNED_IN },
    // Anyone signed in may search, and finds only their own messages (the owner's secret reaches no one else).
    searchMessagesAction: {
      call: (m, fx) => m.searchMessagesAction({ q: fx.secret } as never),
      expect: SIGNED_IN,
    },
    loadThreadAction: { call: (m, fx) => m.loadThreadAction(fx.threadId as never), expect: OWNER_ONLY },
    renameThreadAction: {
      call: (m, fx) => m.renameThreadAction(fx.threadId as never, "Renamed" as never),
      expect: OWNER_ONLY,
    },
    rateAnswerAction: {
      call: (m, fx) => m.rateAnswerAction({ itemId: fx.answerItemId, rating: -1, comment: "too long" } as never),
      expect: OWNER_ONLY,
    },
    archiveThreadAction: {
      call: (m, fx) => m.archiveThreadAction(fx.threadId as never, true as never),
      expect: OWNER_ONLY,
    },
    deleteThreadAction: { call: (m, fx) => m.deleteThreadAction(fx.threadId as never), expect: OWNER_ONLY },
    setThreadModelAction: {
      call: (m, fx) => m.setThreadModelAction(fx.threadId as never, "mock-chat" as never),
      expect: OWNER_ONLY,
    },
    switchBranchAction: {
      call: (m, fx) => m.switchBranchAction(fx.threadId as never, fx.userItemId as never),
      expect: OWNER_ONLY,
    },
    undoTurnAction: { call: (m, fx) => m.undoTurnAction(fx.threadId as never), expect: OWNER_ONLY },
    clearThreadAction: { call: (m, fx) => m.clearThreadAction(fx.threadId as never), expect: OWNER_ONLY },
  },
  "app/(app)/settings/memory/actions.ts": {
    editMemoryAction: {
      call: (m, fx) => m.editMemoryAction(fx.memoryId as never, "Edited text" as never),
      expect: OWNER_ONLY,
    },
    addMemoryAction: { call: (m) => m.addMemoryAction("Likes matrices" as never, "fact" as never), expect: SIGNED_IN },
    privateMemoryAction: {
      call: (m, fx) => m.privateMemoryAction(fx.memoryId as never, true as never),
      expect: OWNER_ONLY,
    },
    pinMemoryAction: { call: (m, fx) => m.pinMemoryAction(fx.memoryId as never, true as never), expect: OWNER_ONLY },
    muteMemoryAction: { call: (m, fx) => m.muteMemoryAction(fx.memoryId as never, true as never), expect: OWNER_ONLY },
    reviewMemoryAction: {
      call: (m, fx) => m.reviewMemoryAction(fx.memoryId as never, true as never),
      expect: OWNER_ONLY,
    },
    // Ids that are not yours restore, archive or delete nothing: the answer says so.
    restoreMemoriesAction: {
      call: async (m, fx) => {
        const db = state.db as TestDb["db"];
        await db.memory.updateMany({ where: { id: fx.memoryId }, data: { status: "archived" } });
        return m.restoreMemoriesAction([fx.memoryId] as never);
      },
      expect: OWNER_ONLY,
      deniedWhen: (r) => (r as { data?: number }).data === 0,
    },
    deleteMemoriesAction: {
      call: (m, fx) => m.deleteMemoriesAction([fx.memoryId] as never),
      expect: OWNER_ONLY,
      deniedWhen: (r) => {
        const d = (r as { data?: { archived: string[]; deleted: number } }).data;
        return !d || d.archived.length + d.deleted === 0;
      },
    },
    purgeMemoriesAction: {
      call: async (m, fx) => {
        const db = state.db as TestDb["db"];
        await db.memory.updateMany({ where: { id: fx.memoryId }, data: { status: "archived" } });
        return m.purgeMemoriesAction([fx.memoryId] as never);
      },
      expect: OWNER_ONLY,
      deniedWhen: (r) => (r as { data?: number }).data === 0,
    },
    settleConflictAction: {
      // The owner's memory in conflict with a second one of theirs.
      call: async (m, fx) => {
        const db = state.db as TestDb["db"];
        const owner = await db.memory.findUniqueOrThrow({ where: { id: fx.memoryId } });
        const other = await db.memory.create({
          data: { userId: owner.userId, text: "Lives in Porto", source: "explicit", conflictWithId: fx.memoryId },
        });
        await db.memory.update({ where: { id: fx.memoryId }, data: { status: "active", conflictWithId: other.id } });
        return m.settleConflictAction({ memoryId: fx.memoryId, otherId: other.id, keep: "both" } as never);
      },
      expect: OWNER_ONLY,
    },
    consolidateNowAction: { call: (m) => m.consolidateNowAction(), expect: SIGNED_IN },
    saveAboutAction: { call: (m) => m.saveAboutAction("I like tea." as never), expect: SIGNED_IN },
    releaseAboutAction: { call: (m) => m.releaseAboutAction(), expect: SIGNED_IN },
    verifyProcedureAction: {
      call: async (m, fx) => {
        await (state.db as TestDb["db"]).memory.update({
          where: { id: fx.memoryId },
          data: { kind: "procedure", needsRevalidation: true },
        });
        return m.verifyProcedureAction(fx.memoryId as never);
      },
      expect: OWNER_ONLY,
    },
    memoryHistoryAction: { call: (m, fx) => m.memoryHistoryAction(fx.memoryId as never), expect: OWNER_ONLY },
    memorySettingsAction: { call: (m) => m.memorySettingsAction({ paused: true } as never), expect: SIGNED_IN },
    forgetMeAction: { call: (m) => m.forgetMeAction("forget me" as never), expect: SIGNED_IN },
  },
  "app/(app)/p/actions.ts": {
    // Anyone signed in lists and makes projects: their own only (the owner's secret name reaches no one else).
    listProjectsAction: { call: (m) => m.listProjectsAction(), expect: SIGNED_IN },
    createProjectAction: { call: (m) => m.createProjectAction({ name: "Garden" } as never), expect: SIGNED_IN },
    updateProjectAction: {
      call: (m, fx) => m.updateProjectAction({ id: fx.projectId, name: "Renamed" } as never),
      expect: OWNER_ONLY,
    },
    deleteProjectAction: { call: (m, fx) => m.deleteProjectAction(fx.projectId as never), expect: OWNER_ONLY },
    moveThreadAction: {
      call: (m, fx) => m.moveThreadAction(fx.threadId as never, fx.projectId as never),
      expect: OWNER_ONLY,
    },
    moveMemoryAction: {
      call: (m, fx) => m.moveMemoryAction(fx.memoryId as never, fx.projectId as never),
      expect: OWNER_ONLY,
    },
    shareProjectAction: { call: (m, fx) => m.shareProjectAction(fx.projectId as never), expect: OWNER_ONLY },
    // Shared projects: here the owner against people outside it; tests/shared-projects.test.ts has every role.
    createSharedProjectAction: {
      call: (m) => m.createSharedProjectAction({ name: "Family" } as never),
      expect: SIGNED_IN,
    },
    cancelInviteAction: {
      call: (m, fx) => m.cancelInviteAction(fx.sharedProjectId as never, "someone@example.com" as never),
      expect: OWNER_ONLY,
    },
    inviteMemberAction: {
      call: (m, fx) =>
        m.inviteMemberAction(fx.sharedProjectId as never, { email: fx.admin.email, role: "viewer" } as never),
      expect: OWNER_ONLY,
    },
    changeRoleAction: {
      call: (m, fx) => m.changeRoleAction(fx.sharedProjectId as never, fx.memberId as never, "viewer" as never),
      expect: OWNER_ONLY,
    },
    transferOwnershipAction: {
      call: (m, fx) => m.transferOwnershipAction(fx.sharedProjectId as never, fx.memberId as never),
      expect: OWNER_ONLY,
    },
    removeMemberAction: {
      call: (m, fx) => m.removeMemberAction(fx.sharedProjectId as never, fx.memberId as never),
      expect: OWNER_ONLY,
    },
    // The owner may not leave (they give the project away or delete it): reached, and refused for that reason.
    leaveProjectAction: {
      call: (m, fx) => m.leaveProjectAction(fx.sharedProjectId as never),
      expect: OWNER_ONLY,
      mayFail: true,
    },
    setKeepLeaversChatsAction: {
      call: (m, fx) => m.setKeepLeaversChatsAction(fx.sharedProjectId as never, true as never),
      expect: OWNER_ONLY,
    },
    setProjectReviewAction: {
      call: (m, fx) => m.setProjectReviewAction(fx.sharedProjectId as never, true as never),
      expect: OWNER_ONLY,
    },
    addProjectMemoryAction: {
      call: (m, fx) => m.addProjectMemoryAction(fx.sharedProjectId as never, "The shed key is blue" as never),
      expect: OWNER_ONLY,
    },
    forgetProjectMemoryAction: {
      call: (m, fx) => m.forgetProjectMemoryAction(fx.sharedProjectId as never, fx.sharedMemoryId as never),
      expect: OWNER_ONLY,
    },
    settleProjectConflictAction: {
      call: (m, fx) =>
        m.settleProjectConflictAction(
          fx.sharedProjectId as never,
          { memoryId: fx.sharedMemoryId, otherId: fx.conflictWithId, keep: "both" } as never,
        ),
      expect: OWNER_ONLY,
    },
    reviewProjectMemoryAction: {
      call: (m, fx) =>
        m.reviewProjectMemoryAction(fx.sharedProjectId as never, fx.sharedMemoryId as never, true as never),
      expect: OWNER_ONLY,
    },
  },
  "app/(app)/settings/keys/actions.ts": {
    // Anyone signed in makes keys for themselves; revoking reaches only one's own.
    createApiKeyAction: {
      call: (m) => m.createApiKeyAction({ name: "laptop", scopes: ["chat"] } as never),
      expect: SIGNED_IN,
    },
    revokeApiKeyAction: { call: (m, fx) => m.revokeApiKeyAction(fx.apiKeyId as never), expect: OWNER_ONLY },
  },
  "app/(app)/settings/password/actions.ts": {
    changePasswordAction: {
      call: (m) =>
        m.changePasswordAction({ current: PASSWORD, next: "a-new-password-1", confirm: "a-new-password-1" } as never),
      expect: SIGNED_IN,
    },
  },
  "app/(app)/settings/data/actions.ts": {
    deleteAccountAction: {
      call: (m) => m.deleteAccountAction({ confirm: "delete my account", password: PASSWORD } as never),
      expect: SIGNED_IN,
    },
    importLearnStatusAction: { call: (m) => m.importLearnStatusAction(), expect: SIGNED_IN },
    // Signed in with nothing imported, it answers "nothing left to learn from".
    startImportLearnAction: { call: (m) => m.startImportLearnAction(), expect: SIGNED_IN, mayFail: true },
    pasteMemoriesAction: {
      call: (m) => m.pasteMemoriesAction("- Lives in Porto\n- Prefers tea" as never),
      expect: SIGNED_IN,
    },
  },
  "app/(app)/admin/actions.ts": {
    changeRoleAction: {
      call: (m, fx) => m.changeRoleAction({ userId: fx.owner.id, role: "USER" } as never),
      expect: ADMIN_ONLY,
    },
    setDisabledAction: {
      call: (m, fx) => m.setDisabledAction({ userId: fx.owner.id, disabled: true } as never),
      expect: ADMIN_ONLY,
    },
    saveModelSettingsAction: {
      call: (m) =>
        m.saveModelSettingsAction({ baseURL: "http://127.0.0.1:9/v1", chatModel: "c", memoryModel: "m" } as never),
      expect: ADMIN_ONLY,
    },
    saveModelListAction: {
      call: (m) =>
        m.saveModelListAction({ models: [{ id: "mock-chat" }, { id: "other" }], defaultId: "mock-chat" } as never),
      expect: ADMIN_ONLY,
    },
    serverModelsAction: { call: (m) => m.serverModelsAction(), expect: ADMIN_ONLY, mayFail: true },
    saveAttachmentLimitsAction: {
      call: (m) => m.saveAttachmentLimitsAction({ fileMb: null, userMb: null } as never),
      expect: ADMIN_ONLY,
    },
    probeImagesAction: { call: (m) => m.probeImagesAction("mock-chat" as never), expect: ADMIN_ONLY, mayFail: true },
    testModelConnectionAction: {
      call: (m) => m.testModelConnectionAction({ baseURL: "", chatModel: "", memoryModel: "" } as never),
      expect: ADMIN_ONLY,
      mayFail: true,
    },
    setUsageLimitsAction: {
      call: (m, fx) => m.setUsageLimitsAction({ userId: fx.owner.id, messages: 50, tokens: null } as never),
      expect: ADMIN_ONLY,
    },
    setTemporaryPasswordAction: {
      call: (m, fx) => m.setTemporaryPasswordAction({ userId: fx.owner.id } as never),
      expect: ADMIN_ONLY,
    },
    inviteUserAction: {
      call: (m) => m.inviteUserAction({ email: `invited-${Date.now()}-${Math.random()}@example.com` } as never),
      expect: ADMIN_ONLY,
    },
    createAccountAction: {
      call: (m) => m.createAccountAction({ email: `added-${Date.now()}-${Math.random()}@example.com` } as never),
      expect: ADMIN_ONLY,
    },
    deleteUserAction: {
      call: (m, fx) =>
        m.deleteUserAction({
          userId: fx.owner.id,
          confirmEmail: fx.owner.email,
          reason: "Requested by email",
        } as never),
      expect: ADMIN_ONLY,
    },
    reviewThreadAction: {
      call: (m, fx) => m.reviewThreadAction({ threadId: fx.threadId, reason: "Abuse report 1" } as never),
      expect: ADMIN_ONLY,
      mayShowOwnerData: ["admin"],
    },
    reviewAttachmentAction: {
      call: (m, fx) =>
        m.reviewAttachmentAction({ attachmentId: fx.sentAttachmentId, reason: "Abuse report 1" } as never),
      expect: ADMIN_ONLY,
      mayShowOwnerData: ["admin"],
    },
    reviewMemoriesAction: {
      call: (m, fx) => m.reviewMemoriesAction({ userId: fx.owner.id, reason: "Abuse report 1" } as never),
      expect: ADMIN_ONLY,
      mayShowOwnerData: ["admin"],
    },
  },
};

const json = (body: unknown) =>
  new Request("http://mnemo.test/x", {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
/** Every other /v1 route (and the OAuth metadata paths): an API key or nothing, never a browser session. */
function v1KeyOnly(): Record<string, Record<string, Entry>> {
  const ctx = (params: Record<string, string>) => ({ params: Promise.resolve(params) });
  const call =
    (method: string, url: string, params: Record<string, string> = {}, body?: unknown) =>
    (m: Record<string, (...a: never[]) => unknown>) =>
      m[method](
        new Request(`http://mnemo.test${url}`, {
          method,
          ...(body ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
        }) as never,
        ctx(params) as never,
      );
  const keyOnly = (method: string, url: string, params?: Record<string, string>, body?: unknown): Entry => ({
    call: call(method, url, params, body),
    expect: NOBODY,
  });
  const conv = { id: "conv_x" };
  return {
    "app/v1/[...path]/route.ts": Object.fromEntries(
      ["GET", "POST", "PUT", "PATCH", "DELETE"].map((m) => [m, keyOnly(m, "/v1/completions", { path: "completions" })]),
    ),
    "app/v1/models/[id]/route.ts": { GET: keyOnly("GET", "/v1/models/mnemo", { id: "mnemo" }) },
    "app/v1/embeddings/route.ts": { POST: keyOnly("POST", "/v1/embeddings", {}, { input: "hi" }) },
    "app/v1/responses/route.ts": { POST: keyOnly("POST", "/v1/responses", {}, { input: "hi" }) },
    "app/v1/responses/compact/route.ts": { POST: keyOnly("POST", "/v1/responses/compact", {}, { input: "hi" }) },
    "app/v1/responses/[id]/route.ts": {
      GET: keyOnly("GET", "/v1/responses/resp_x", { id: "resp_x" }),
      DELETE: keyOnly("DELETE", "/v1/responses/resp_x", { id: "resp_x" }),
    },
    "app/v1/conversations/route.ts": { POST: keyOnly("POST", "/v1/conversations", {}, {}) },
    "app/v1/conversations/[id]/route.ts": {
      GET: keyOnly("GET", "/v1/conversations/conv_x", conv),
      DELETE: keyOnly("DELETE", "/v1/conversations/conv_x", conv),
    },
    "app/v1/conversations/[id]/items/route.ts": {
      GET: keyOnly("GET", "/v1/conversations/conv_x/items", conv),
      POST: keyOnly("POST", "/v1/conversations/conv_x/items", conv, { items: [] }),
    },
    "app/v1/conversations/[id]/items/[itemId]/route.ts": {
      GET: keyOnly("GET", "/v1/conversations/conv_x/items/msg_x", { ...conv, itemId: "msg_x" }),
      DELETE: keyOnly("DELETE", "/v1/conversations/conv_x/items/msg_x", { ...conv, itemId: "msg_x" }),
    },
    // OAuth metadata: the same JSON 404 for anyone.
    "app/.well-known/[...path]/route.ts": { GET: { call: (m) => m.GET(), expect: NOBODY } },
  };
}

const ROUTES: Record<string, Record<string, Entry>> = {
  "app/api/auth/[...nextauth]/route.ts": {
    GET: { call: (m) => m.GET(new Request("http://mnemo.test/api/auth/session") as never), expect: PUBLIC },
    POST: {
      call: (m) => m.POST(new Request("http://mnemo.test/api/auth/signout", { method: "POST" }) as never),
      expect: PUBLIC,
    },
  },
  "app/api/health/route.ts": { GET: { call: (m) => m.GET(), expect: PUBLIC } },
  // The OpenAI-compatible API takes API keys only: no browser session reaches it (tests/api.test.ts covers keys).
  "app/v1/models/route.ts": {
    GET: { call: (m) => m.GET(new Request("http://mnemo.test/v1/models") as never), expect: NOBODY },
  },
  "app/mcp/route.ts": {
    POST: {
      call: (m) => m.POST(json({ jsonrpc: "2.0", id: 1, method: "tools/list" }) as never),
      expect: NOBODY,
    },
    // No event stream for anyone (405): the answer is the same sentence whoever asks.
    GET: {
      call: (m) => m.GET(),
      expect: NOBODY,
      deniedWhen: (b) => (b as { error?: { code?: number } }).error?.code === -32000,
    },
    DELETE: {
      call: (m) => m.DELETE(new Request("http://mnemo.test/mcp", { method: "DELETE" }) as never),
      expect: NOBODY,
    },
  },
  "app/v1/chat/completions/route.ts": {
    POST: {
      call: (m) => m.POST(json({ messages: [{ role: "user", content: "hi" }] }) as never),
      expect: NOBODY,
    },
  },
  ...v1KeyOnly(),
  "app/api/ops/route.ts": {
    POST: { call: (m) => m.POST(json({ command: "jobs:retention", args: [], cwd: "/" }) as never), expect: NOBODY },
  },
  "app/api/chat/route.ts": {
    POST: {
      call: (m, fx) => m.POST(json({ kind: "send", threadId: fx.threadId, content: "next question" }) as never),
      expect: OWNER_ONLY,
    },
  },
  "app/api/chat/stop/route.ts": {
    POST: {
      call: (m, fx) => m.POST(json({ itemId: fx.streamingItemId }) as never),
      expect: OWNER_ONLY,
      deniedWhen: (b) => (b as { stopped?: boolean }).stopped === false,
      stopsAnswer: true,
    },
  },
  "app/api/memories/import/route.ts": {
    POST: {
      call: (m) =>
        m.POST(json({ format: "mnemo-memories", version: 1, memories: [{ text: "Imported fact" }] }) as never),
      expect: SIGNED_IN,
    },
  },
  "app/api/export/route.ts": { GET: { call: (m) => m.GET(), expect: SIGNED_IN } },
  "app/api/attachments/route.ts": {
    POST: {
      call: (m) =>
        m.POST(new Request("http://mnemo.test/api/attachments?name=a.txt", { method: "POST", body: "hello" }) as never),
      expect: SIGNED_IN,
    },
  },
  "app/api/attachments/[id]/route.ts": {
    GET: {
      call: (m, fx) =>
        m.GET(
          new Request(`http://mnemo.test/api/attachments/${fx.attachmentId}?as=text`) as never,
          {
            params: Promise.resolve({ id: fx.attachmentId }),
          } as never,
        ),
      expect: OWNER_ONLY,
      mayShowOwnerData: ["owner"],
    },
    DELETE: {
      call: (m, fx) =>
        m.DELETE(
          new Request(`http://mnemo.test/api/attachments/${fx.attachmentId}`, { method: "DELETE" }) as never,
          {
            params: Promise.resolve({ id: fx.attachmentId }),
          } as never,
        ),
      expect: OWNER_ONLY,
    },
  },
  "app/api/import/route.ts": {
    POST: {
      call: (m) =>
        m.POST(
          new Request("http://mnemo.test/api/import", {
            method: "POST",
            body: JSON.stringify([
              { uuid: "c1", name: "x", chat_messages: [{ uuid: "m1", sender: "human", text: "hi" }] },
            ]),
          }) as never,
        ),
      expect: SIGNED_IN,
    },
  },
  "app/api/memories/export/route.ts": {
    GET: {
      call: (m) => m.GET(new Request("http://mnemo.test/api/memories/export?format=markdown") as never),
      expect: SIGNED_IN,
    },
  },
};

function walk(dir: string, name: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? walk(p, name) : d.name === name ? [p] : [];
  });
}

describe("authorization matrix", () => {
  let t: TestDb;
  let mock: MockLlm;
  let passwordHash: string;
  let n = 0;

  beforeAll(async () => {
    t = await createTestDb("pglite");
    state.db = t.db;
    mock = await startMockLlm();
    passwordHash = await hashPassword(PASSWORD);
    const first = await t.db.user.create({ data: { email: "first-admin@example.com", role: "ADMIN" } });
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, first.id);
    clearConnectionCache(t.db);
  });
  afterAll(async () => {
    await mock?.close();
    await t?.close();
  });

  async function fixture(): Promise<Fixture> {
    const k = n++;
    const mk = (who: string, role: "USER" | "ADMIN" = "USER") =>
      t.db.user.create({ data: { email: `${who}-${k}@example.com`, role, passwordHash } });
    const [owner, other, admin] = [await mk("owner"), await mk("other"), await mk("admin", "ADMIN")];
    const secret = `ownersecret${k}x`;
    const th = await createThread(await userContext(t.db, owner.id), { title: `Title ${secret}` });
    const [q, a] = await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: `question ${secret}` },
        { role: "assistant", content: `answer ${secret}` },
      ],
      { cipher: await threadCipher(t.db, th.id) },
    );
    const [, s] = await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: "more" },
        { role: "assistant", status: "streaming" },
      ],
      { cipher: await threadCipher(t.db, th.id) },
    );
    const mem = await addMemory(
      await userContext(t.db, owner.id),
      { text: `Memory ${secret}`, source: "inferred", status: "pending" },
      "model",
      "t",
    );
    const live = trackGeneration(s.id, owner.id);
    const project = await createProject(await userContext(t.db, owner.id), {
      name: `Project ${secret}`,
      instructions: `Instructions ${secret}`,
    });
    const shared = await sharedProject(owner.id, secret);
    return {
      owner,
      other,
      admin,
      ...shared,
      threadId: th.id,
      userItemId: q.id,
      answerItemId: a.id,
      streamingItemId: s.id,
      live,
      memoryId: mem.id,
      projectId: project.id,
      apiKeyId: (await createApiKey(await userContext(t.db, owner.id), { name: `Key ${secret}` })).id,
      sentAttachmentId: await sentFile(owner.id, th.id, q.id, secret),
      attachmentId: (await saveUpload(await userContext(t.db, owner.id), "notes.txt", Buffer.from(`File ${secret}`)))
        .id,
      secret,
    };
  }

  async function sharedProject(ownerId: string, secret: string) {
    const me = await userContext(t.db, ownerId);
    const { id } = await createSharedProject(me, { name: `Shared ${secret}` });
    const member = await t.db.user.create({ data: { email: `member-${n}-${Math.random()}@example.com` } });
    const a = await projectAccess(me, id, "own");
    await inviteMember(a, { email: member.email, role: "editor" });
    const m = await addMemory(a.content, { text: `Shared memory ${secret}`, source: "manual" }, "user", "t");
    const other = await addMemory(a.content, { text: `Opposite ${secret}`, source: "manual" }, "user", "t");
    await markConflict(t.db, a.content.userId, m.id, other.id);
    return { sharedProjectId: id, memberId: member.id, sharedMemoryId: m.id, conflictWithId: other.id };
  }

  async function sentFile(ownerId: string, threadId: string, itemId: string, secret: string) {
    const { id } = await saveUpload(await userContext(t.db, ownerId), "sent.txt", Buffer.from(`Sent ${secret}`));
    await bindToMessage(t.db, ownerId, [id], threadId, itemId);
    return id;
  }

  async function run(entry: Entry, mod: Record<string, (...a: never[]) => unknown>, subject: Subject) {
    const fx = await fixture();
    const who = subject === "anon" ? null : fx[subject];
    state.session = who
      ? { id: who.id, email: who.email, role: subject === "admin" ? "ADMIN" : "USER", authAt: Date.now() }
      : null;
    let verdict: Verdict = "allow";
    let shown = "";
    try {
      const r = await entry.call(mod, fx);
      if (r instanceof Response) {
        shown = await r.text();
        if ([401, 403, 404].includes(r.status)) verdict = "deny";
        else if (entry.deniedWhen) verdict = entry.deniedWhen(JSON.parse(shown)) ? "deny" : "allow";
      } else {
        shown = JSON.stringify(r ?? null);
        const res = r as { ok?: boolean; error?: string } | undefined;
        if (res && res.ok === false && /not found|sign in|access/i.test(res.error ?? "")) verdict = "deny";
        else if (res?.ok === false && !entry.mayFail) throw new Error(`unexpected failure: ${res.error}`);
        else if (entry.deniedWhen?.(r)) verdict = "deny";
      }
    } catch (e) {
      const redirect = String((e as { digest?: string })?.digest ?? "");
      if (e instanceof UnauthorizedError || e instanceof ForbiddenError) verdict = "deny";
      // A Next redirect is an answer: to sign-in with a callback is a denial, anywhere else (registration's
      // next step) is not.
      else if (redirect.startsWith("NEXT_REDIRECT")) {
        shown = redirect;
        if (redirect.includes("/signin?callbackUrl")) verdict = "deny";
      } else throw e;
    }
    const leaked =
      shown.includes(fx.secret) && subject !== "owner" && !(entry.mayShowOwnerData ?? []).includes(subject);
    const stopped = fx.live.signal.aborted;
    untrackGeneration(fx.streamingItemId);
    return { verdict, leaked, stopped };
  }

  it("null (or nothing, or a number) as any server action's argument is a validation error, never a 500", async () => {
    const fx = await fixture();
    state.session = { id: fx.owner.id, email: fx.owner.email, role: "USER", authAt: Date.now() };
    const refused: string[] = [];
    for (const file of walk(path.resolve("app"), "actions.ts")) {
      if (!fs.readFileSync(file, "utf8").startsWith('"use server"')) continue;
      const mod = await import(/* @vite-ignore */ path.resolve(file));
      for (const [name, fn] of Object.entries(mod)) {
        if (typeof fn !== "function") continue;
        for (const args of [[null], [], [42], [null, null]]) {
          let r: unknown;
          try {
            r = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
          } catch (e) {
            // A form action's (prev, FormData) or a redirect to sign in: thrown, not a crash.
            const digest = String((e as { digest?: string })?.digest ?? "");
            if (digest.startsWith("NEXT_REDIRECT")) continue;
            refused.push(`${name}(${args.map(String).join(", ")}) threw ${(e as Error).message}`);
            continue;
          }
          const text = JSON.stringify(r ?? null);
          if (/Something went wrong/.test(text)) refused.push(`${name}(${args.map(String).join(", ")}): ${text}`);
        }
      }
    }
    expect(refused).toEqual([]);
  });

  it("lists every server action and route handler in the app", async () => {
    const root = path.resolve("app");
    for (const file of walk(root, "actions.ts")) {
      const rel = path.relative(process.cwd(), file).split(path.sep).join("/");
      if (!fs.readFileSync(file, "utf8").startsWith('"use server"')) continue;
      const mod = await import(/* @vite-ignore */ path.resolve(file));
      const names = Object.keys(mod).filter((k) => typeof mod[k] === "function");
      expect(Object.keys(ACTIONS[rel] ?? {}).sort(), `server actions in ${rel}: add each to the matrix`).toEqual(
        names.sort(),
      );
    }
    for (const file of walk(root, "route.ts")) {
      const rel = path.relative(process.cwd(), file).split(path.sep).join("/");
      const mod = await import(/* @vite-ignore */ path.resolve(file));
      const methods = Object.keys(mod).filter((k) => /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/.test(k));
      expect(Object.keys(ROUTES[rel] ?? {}).sort(), `route handlers in ${rel}: add each to the matrix`).toEqual(
        methods.sort(),
      );
    }
    const files = [...walk(root, "actions.ts"), ...walk(root, "route.ts")].map((f) =>
      path.relative(process.cwd(), f).split(path.sep).join("/"),
    );
    for (const listed of [...Object.keys(ACTIONS), ...Object.keys(ROUTES)])
      expect(files, `${listed} is listed but does not exist`).toContain(listed);
  });

  const cells = [...Object.entries(ACTIONS), ...Object.entries(ROUTES)].flatMap(([file, entries]) =>
    Object.entries(entries).flatMap(([name, entry]) =>
      (["owner", "other", "admin", "anon"] as Subject[]).map((s) => ({ file, name, entry, subject: s })),
    ),
  );
  it.each(cells.map((c) => [`${c.file} ${c.name} as ${c.subject} → ${c.entry.expect[c.subject]}`, c] as const))(
    "%s",
    async (_label, c) => {
      const mod = await import(/* @vite-ignore */ path.resolve(c.file));
      const r = await run(c.entry, mod, c.subject);
      expect(r.verdict).toBe(c.entry.expect[c.subject]);
      expect(r.leaked, "the result shows the owner's data").toBe(false);
      // The in-process effect, not only the response: only the owner's own Stop ends the running answer.
      expect(r.stopped, "the owner's running answer was stopped").toBe(!!c.entry.stopsAnswer && r.verdict === "allow");
    },
  );
});
