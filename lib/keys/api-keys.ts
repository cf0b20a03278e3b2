// Personal API keys: how other tools (an `openai` client, Open WebUI, scripts) use a user's memory through /v1.
// A key is `mnemo_` and 32 random base64url characters, shown once; the database keeps its SHA-256, its first
// characters (to tell keys apart), a name (sealed), scopes, an optional project and when it was last used.
// Creating and revoking are audited. Keys are accepted only in `Authorization: Bearer`: a key in a URL ends up in
// logs and browser history, so a request that carries one there is refused (and the key should be revoked).
import crypto from "node:crypto";
import { z } from "zod";
import type { Db } from "@/lib/db/types";
import { AppError, ForbiddenError, NotFoundError, UnauthorizedError } from "@/lib/errors";
import { cleanText } from "@/lib/text/policy";
import { recordAudit } from "@/lib/admin/review";
import { userContext, type UserContext } from "@/lib/user-context";
import { mayDo, projectAccess } from "@/lib/projects/access";
import { projectScope } from "@/lib/projects/scope";
import { warmMessageVectors } from "@/lib/memory/warm-vectors";

export const API_SCOPES = ["chat", "memory:read", "memory:write"] as const;
export type ApiScope = (typeof API_SCOPES)[number];

export const apiKeyInput = z.object({
  name: z
    .string()
    .transform(cleanText)
    .pipe(z.string().trim().min(1, "Name the key (e.g. “laptop”).").max(60, "A key name is at most 60 characters.")),
  scopes: z.array(z.enum(API_SCOPES)).min(1, "Choose at least one scope.").default(["chat"]),
  projectId: z.string().trim().min(1).max(64).nullable().default(null),
});

const KEY_PREFIX = "mnemo_";
const hashOf = (key: string) => crypto.createHash("sha256").update(key).digest("hex");

export type ApiKeySummary = {
  id: string;
  name: string;
  prefix: string;
  scopes: ApiScope[];
  projectId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

/** Makes a key; returns it in full this once. */
export async function createApiKey(u: UserContext, input: z.input<typeof apiKeyInput>) {
  const f = apiKeyInput.parse(input);
  // Their own project, or a shared one they belong to (the key then acts with their role there, checked at each use).
  if (f.projectId) await projectAccess(u, f.projectId, "read");
  const key = KEY_PREFIX + crypto.randomBytes(24).toString("base64url");
  const row = await u.db.$transaction(async (tx) => {
    const made = await tx.apiKey.create({
      data: {
        userId: u.userId,
        name: u.cipher.seal(f.name),
        prefix: key.slice(0, KEY_PREFIX.length + 6),
        hash: hashOf(key),
        scopes: [...new Set(f.scopes)],
        projectId: f.projectId,
      },
    });
    await recordAudit(tx, {
      actorId: u.userId,
      subjectUserId: u.userId,
      action: "apikey.create",
      detail: { keyId: made.id, scopes: made.scopes, projectId: made.projectId },
    });
    return made;
  });
  return { id: row.id, key, prefix: row.prefix };
}

export async function listApiKeys(u: UserContext): Promise<ApiKeySummary[]> {
  const rows = await u.db.apiKey.findMany({ where: { userId: u.userId }, orderBy: { createdAt: "desc" } });
  return rows.map((k) => ({
    id: k.id,
    name: u.cipher.open(k.name),
    prefix: k.prefix,
    scopes: k.scopes as ApiScope[],
    projectId: k.projectId,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    revokedAt: k.revokedAt?.toISOString() ?? null,
  }));
}

/** Revokes a key at once (it is kept, revoked, so the threads it made still say which key). */
export async function revokeApiKey(u: UserContext, id: string) {
  await u.db.$transaction(async (tx) => {
    const r = await tx.apiKey.updateMany({
      where: { id, userId: u.userId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (!r.count) throw new NotFoundError("item");
    await recordAudit(tx, {
      actorId: u.userId,
      subjectUserId: u.userId,
      action: "apikey.revoke",
      detail: { keyId: id },
    });
  });
}

/** Who a request with a key acts as: the key's user (in the key's project scope, if any), its scopes and name. */
export type KeyCaller = { u: UserContext; keyId: string; keyName: string; scopes: ApiScope[] };

const URL_KEY_PARAMS = ["api_key", "apikey", "key", "token", "access_token"];

/**
 * The caller of a /v1 or /mcp request: a live key of an enabled user in `Authorization: Bearer`, holding `scope`
 * (any of them for null: /mcp checks each tool's). 401 without a valid key (or with one in the URL), 403 with a key
 * that lacks the scope.
 */
export async function authenticateKey(db: Db, request: Request, scope: ApiScope | null): Promise<KeyCaller> {
  const url = new URL(request.url);
  if (URL_KEY_PARAMS.some((p) => url.searchParams.has(p)))
    throw new UnauthorizedError(
      "API keys are accepted only in the Authorization header (Bearer), never in a URL. Revoke this key and make a new one.",
    );
  const header = request.headers.get("authorization") ?? "";
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m || !m[1].startsWith(KEY_PREFIX)) throw new UnauthorizedError("Send a Mnemo API key as Authorization: Bearer.");
  const key = await db.apiKey.findUnique({
    where: { hash: hashOf(m[1]) },
    include: {
      user: { select: { disabled: true } },
      project: { select: { id: true, memoryMode: true, shared: true } },
    },
  });
  if (!key || key.revokedAt || key.user.disabled) throw new UnauthorizedError("This API key is not valid.");
  if (scope && !key.scopes.includes(scope)) throw new AppError(`This API key lacks the “${scope}” scope.`, 403);
  // Last use, at most once a minute per key (a busy client must not write on every request).
  if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > 60_000)
    await db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } }).catch(() => undefined);
  // A client's first question must not wait for the exact search's first read of the user's vectors.
  warmMessageVectors(db, key.userId);
  const own = await userContext(db, key.userId, projectScope(key.project));
  const keyName = own.cipher.open(key.name);
  if (!key.project?.shared) return { u: own, keyId: key.id, keyName, scopes: key.scopes as ApiScope[] };
  // A shared project's key acts with its owner's role there, as it is now: a member removed stops it at once, and a
  // viewer's key only reads (lib/projects/access.ts).
  const a = await projectAccess(own, key.project.id, "read").catch((e) => {
    if (e instanceof NotFoundError) throw new ForbiddenError("This key's project is no longer shared with you.");
    throw e;
  });
  const scopes = (key.scopes as ApiScope[]).filter((s) => mayDo(a.role, "write") || s === "memory:read");
  if (scope && !scopes.includes(scope))
    throw new AppError(`A viewer of this project can only read its memories (the “${scope}” scope is refused).`, 403);
  return { u: a.content, keyId: key.id, keyName, scopes };
}
