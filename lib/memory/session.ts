// Session memory for one thread, in the shape of the OpenAI Agents SDK `Session`
// (getItems / addItems / popItem / clearSession), stored with Prisma.
// A thread's items form a tree (edits and regenerations branch); the session
// works on the active branch: the path from the thread's active leaf to the root.
// Ownership is not checked here: callers open a session through
// `openSession(u, threadId)` (lib/chat/threads.ts), which does.
import { sessionMayActSql, type SessionProof } from "@/lib/auth/session-check";
import { mayContinueSql } from "@/lib/projects/access";
import crypto from "node:crypto";
import type { Db } from "@/lib/db/client";
import { directRows } from "@/lib/db/function-calls";
import { Prisma, type ItemRole, type ItemStatus } from "@/lib/generated/prisma/client";
import { openJson, sealJson, type ContentCipher } from "@/lib/crypto/content";
import { retentionCutoff } from "@/lib/account/retention";
import { messageTokens } from "./tokens";
import { NotFoundError } from "@/lib/errors";
import type { ProjectMemoryMode } from "@/lib/projects/scope";

export type ToolCall = { id: string; name: string; arguments: string };

export type NewItem = {
  /** A UUID chosen ahead (an API response's id is known before its answer is stored); else one is made. */
  id?: string;
  role: ItemRole;
  content?: string;
  toolCalls?: ToolCall[];
  toolCallId?: string;
  toolName?: string;
  status?: ItemStatus;
  error?: string;
  model?: string;
  promptTokens?: number;
  completionTokens?: number;
  sourceRef?: string;
};

export type SessionItem = {
  id: string;
  parentId: string | null;
  position: number;
  role: ItemRole;
  content: string;
  toolCalls: ToolCall[] | null;
  toolCallId: string | null;
  toolName: string | null;
  status: ItemStatus;
  error: string | null;
  model: string | null;
  tokens: number;
  promptTokens: number | null;
  completionTokens: number | null;
  sourceRef: string | null;
  createdAt: Date;
};

export interface Session {
  getSessionId(): string;
  getItems(limit?: number): Promise<SessionItem[]>;
  addItems(items: NewItem[]): Promise<SessionItem[]>;
  popItem(): Promise<SessionItem | null>;
  clearSession(): Promise<void>;
}

/** An item's columns as ItemRow reads them (the window function, migration context_window_function, returns these). */
export const itemColumns = (table: "i" | "d" | "ins" | "path") => {
  const t = table;
  return Prisma.raw(`${t}.id, ${t}."parentId", ${t}.position, ${t}.role::text AS role, ${t}.content, ${t}."toolCalls", ${t}."toolCallId",
   ${t}."toolName", ${t}.status::text AS status, ${t}.error, ${t}.model, ${t}.tokens, ${t}."promptTokens",
   ${t}."completionTokens", ${t}."sourceRef", ${t}."createdAt"`);
};

/** Only the fields a client may see (never internal columns such as userId or searchTokens). */
export function publicItem(i: SessionItem): SessionItem {
  return {
    id: i.id,
    parentId: i.parentId,
    position: i.position,
    role: i.role,
    content: i.content,
    toolCalls: i.toolCalls,
    toolCallId: i.toolCallId,
    toolName: i.toolName,
    status: i.status,
    error: i.error,
    model: i.model,
    tokens: i.tokens,
    promptTokens: i.promptTokens,
    completionTokens: i.completionTokens,
    sourceRef: i.sourceRef,
    createdAt: i.createdAt,
  };
}

export type ItemRow = Omit<SessionItem, "createdAt"> & { createdAt: Date | string };
export const toItem = (r: ItemRow): SessionItem => ({ ...r, createdAt: new Date(r.createdAt) });
/** A stored row as the user wrote it (decrypted when encryption at rest is on). */
export const openItem = (c: ContentCipher, r: ItemRow): SessionItem => ({
  ...r,
  content: c.open(r.content),
  toolCalls: openJson<ToolCall[]>(c, r.toolCalls),
  createdAt: new Date(r.createdAt),
});

/**
 * CTEs `walk` (recursive) and `path`: the items on the branch ending at the
 * leaf, at most `limit` steps up the parent links, with itemColumns. The walk
 * carries ids only: whole rows (search vectors, embeddings) would be copied at
 * every step. Use after WITH RECURSIVE.
 * (The per-turn window, which also stops at the token budget, is the function
 * in the migration context_window_function.)
 */
export const branchPath = (leafId: string, threadId: string, limit: number) => Prisma.sql`walk AS (
       SELECT i.id, i."parentId", 1 AS depth FROM "Item" i WHERE i.id = ${leafId} AND i."threadId" = ${threadId}
       UNION ALL
       SELECT i.id, i."parentId", w.depth + 1 FROM "Item" i JOIN walk w ON i.id = w."parentId" WHERE w.depth < ${limit}::int
     ), path AS MATERIALIZED (
       SELECT ${itemColumns("i")} FROM walk w JOIN "Item" i ON i.id = w.id
     )`;

/**
 * The newest `limit` items on the path ending at `leafId`, oldest first, in one
 * query: a recursive walk up the parent links that stops after `limit` steps,
 * so its cost does not grow with the thread's length.
 */
export async function pathItems(
  db: Db,
  threadId: string,
  leafId: string | null,
  limit: number,
  c: ContentCipher,
): Promise<SessionItem[]> {
  if (!leafId || limit <= 0) return [];
  const rows = await db.$queryRaw<ItemRow[]>`
    WITH RECURSIVE ${branchPath(leafId, threadId, limit)}
    SELECT ${itemColumns("path")} FROM path WHERE path."createdAt" >= ${retentionCutoff()} ORDER BY position ASC
  `;
  return rows.map((r) => openItem(c, r));
}

/**
 * Appends a batch atomically in ONE statement: the thread row's UPDATE takes
 * the row lock (so concurrent appends queue up), reserves consecutive positions
 * and moves the leaf; SET reads the old leaf into `appendParentId`, which the
 * INSERT uses as the batch's parent. `parent`: undefined = the active leaf;
 * a string/null = branch off that item (edit, regenerate).
 * `as` folds the ownership and "user still enabled" checks into the same
 * statement, and `session` the whole session check (lib/auth/session-check.ts).
 * Returns [] when the thread does not exist, is not the owner's, or the session may not act.
 */
export async function appendItems(
  db: Db,
  threadId: string,
  items: NewItem[],
  opts: AppendOptions,
): Promise<SessionItem[]> {
  return (await appendItemsMeta(db, threadId, items, opts)).items;
}

export type AppendOptions = {
  cipher: ContentCipher;
  parent?: string | null;
  /**
   * Who appends, checked in the statement: `actorId` may continue the thread (lib/projects/access.ts), whose rows
   * are `userId`'s (the cipher's: a shared project's thread is never written under a member's own key).
   */
  as?: { actorId: string; userId: string };
  session?: SessionProof;
};

export type AppendMeta = {
  temporary: boolean;
  memoryPaused: boolean;
  memoryReview: boolean;
  /** "What Mnemo knows about you" (lib/memory/about.ts), opened; recall uses it when the memories do not all fit. */
  aboutSummary: string | null;
  /** The thread's project (its instructions opened), or null for a general chat. */
  project: { id: string; memoryMode: ProjectMemoryMode; instructions: string } | null;
  /** The chat models the thread and its project were set to answer with (null: not set; lib/llm/models.ts). */
  models: { thread: string | null; project: string | null };
  /** Whether the thread had files bound to its messages before this append (lib/attachments/prompt.ts). */
  hasAttachments: boolean;
};

/** appendItems, also returning the thread's and owner's flags read in the same statement. */
export async function appendItemsMeta(
  db: Db,
  threadId: string,
  items: NewItem[],
  opts: AppendOptions,
): Promise<{ items: SessionItem[]; meta: AppendMeta | null }> {
  if (!items.length) return { items: [], meta: null };
  const ids = items.map((it) => it.id ?? crypto.randomUUID());
  const explicitParent = opts.parent !== undefined;
  const rows = await appendStatement(db, {
    threadId,
    payload: JSON.stringify(appendPayload(items, ids, opts.cipher)),
    explicit: explicitParent,
    parent: explicitParent ? (opts.parent ?? null) : null,
    leaf: ids[ids.length - 1],
    count: items.length,
    ownerId: opts.as?.actorId ?? null,
    rowsOf: opts.as?.userId ?? null,
    sid: opts.session?.sid ?? null,
    authAt: opts.session?.authAt ?? null,
  });
  // The meta columns (m_*) repeat on every row; the items are the rest.
  const itemOf = (row: AppendRow) =>
    Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith("m_"))) as ItemRow;
  return {
    items: rows.map((row) => openItem(opts.cipher, itemOf(row))),
    meta: rows[0] ? appendMeta(rows[0], opts.cipher) : null,
  };
}

/** The batch's rows as the statement reads them (jsonb_to_recordset), sealed with the thread's cipher. */
function appendPayload(items: NewItem[], ids: string[], c: ContentCipher) {
  return items.map((it, ord) => ({
    id: ids[ord],
    ord,
    prev: ord > 0 ? ids[ord - 1] : null,
    role: it.role,
    content: c.seal(it.content ?? ""),
    searchTokens: c.searchTokens(it.content ?? ""),
    toolCalls: sealJson(c, it.toolCalls ?? null),
    toolCallId: it.toolCallId ?? null,
    toolName: it.toolName ?? null,
    status: it.status ?? "complete",
    error: it.error ?? null,
    model: it.model ?? null,
    tokens: messageTokens(it.content ?? "", it.toolCalls ? JSON.stringify(it.toolCalls) : ""),
    promptTokens: it.promptTokens ?? null,
    completionTokens: it.completionTokens ?? null,
    sourceRef: it.sourceRef ?? null,
  }));
}

type AppendParams = {
  threadId: string;
  payload: string;
  explicit: boolean;
  parent: string | null;
  leaf: string;
  count: number;
  ownerId: string | null;
  rowsOf: string | null;
  sid: string | null;
  authAt: number | null;
};

type AppendRow = ItemRow & {
  m_temporary: boolean;
  m_paused: boolean | null;
  m_review: boolean | null;
  m_about: string | null;
  m_project: string | null;
  m_mode: ProjectMemoryMode | null;
  m_instructions: string | null;
  m_thread_model: string | null;
  m_project_model: string | null;
  m_files: boolean;
};

/**
 * The append's one statement: checks, thread update, inserts, and the flags the turn needs (m_* columns). Sent as
 * the turn's reads are (`directRows`): on the embedded database it is parsed once, not on every message.
 */
function appendStatement(db: Db, p: AppendParams) {
  const sql = Prisma.sql`
    WITH upd AS (
       UPDATE "Thread" t SET
         "appendParentId" = CASE WHEN ${p.explicit}::boolean THEN ${p.parent}::text ELSE t."activeLeafId" END,
         "activeLeafId" = ${p.leaf}::text,
         "nextPosition" = t."nextPosition" + ${p.count}::int,
         "lastActivityAt" = now(),
         "updatedAt" = now()
       WHERE t.id = ${p.threadId}
         AND (${p.ownerId}::text IS NULL OR (${mayContinueSql(Prisma.sql`${p.ownerId}::text`)} AND EXISTS (SELECT 1 FROM "User" u WHERE u.id = ${p.ownerId}::text AND NOT u.disabled)))
         AND (${p.rowsOf}::text IS NULL OR t."userId" = ${p.rowsOf}::text)
         AND (${p.sid}::text IS NULL OR ${sessionMayActSql(Prisma.sql`${p.ownerId}::text`, Prisma.sql`${p.sid}::text`, Prisma.sql`${p.authAt}::bigint`)})
         AND (NOT ${p.explicit}::boolean OR ${p.parent}::text IS NULL OR EXISTS (SELECT 1 FROM "Item" p WHERE p.id = ${p.parent}::text AND p."threadId" = ${p.threadId}))
       RETURNING t."appendParentId" AS parent, t."nextPosition" - ${p.count}::int AS base, t.temporary, t."userId", t."projectId",
         t.model
     ), ins AS (
       INSERT INTO "Item" (id, "threadId", "userId", "parentId", position, role, content, "searchTokens", "toolCalls", "toolCallId", "toolName",
                           status, error, model, tokens, "promptTokens", "completionTokens", "sourceRef", "createdAt", "updatedAt")
       SELECT x.id, ${p.threadId}::text, upd."userId", CASE WHEN x.ord = 0 THEN upd.parent ELSE x.prev END, upd.base + x.ord, x.role::"ItemRole", x.content, x."searchTokens",
              x."toolCalls", x."toolCallId", x."toolName", x.status::"ItemStatus", x.error, x.model, x.tokens,
              x."promptTokens", x."completionTokens", x."sourceRef", now(), now()
       FROM upd, jsonb_to_recordset(${p.payload}::jsonb) AS x(id text, ord int, prev text, role text, content text, "searchTokens" text, "toolCalls" jsonb,
              "toolCallId" text, "toolName" text, status text, error text, model text, tokens int, "promptTokens" int,
              "completionTokens" int, "sourceRef" text)
       RETURNING *
     )
     -- A model-written summary waiting to be rewritten (no date: lib/memory/about.ts) is not sent.
     SELECT ${itemColumns("ins")}, upd.temporary AS "m_temporary", u."memoryPaused" AS "m_paused", u."memoryReview" AS "m_review",
            CASE WHEN u."aboutSummaryEdited" OR u."aboutSummaryAt" IS NOT NULL THEN u."aboutSummary" END AS "m_about",
            pr.id AS "m_project", pr."memoryMode"::text AS "m_mode", pr.instructions AS "m_instructions",
            upd.model AS "m_thread_model", pr.model AS "m_project_model",
            EXISTS (SELECT 1 FROM "Attachment" a WHERE a."threadId" = ${p.threadId} AND a."itemId" IS NOT NULL) AS "m_files"
     FROM ins CROSS JOIN upd LEFT JOIN "User" u ON u.id = upd."userId" LEFT JOIN "Project" pr ON pr.id = upd."projectId"
     ORDER BY ins.position ASC
  `;
  return directRows<AppendRow>(db, sql, ["createdAt"]);
}

function appendMeta(first: AppendRow, c: ContentCipher): AppendMeta {
  return {
    temporary: first.m_temporary,
    memoryPaused: !!first.m_paused,
    memoryReview: !!first.m_review,
    aboutSummary: first.m_about ? c.open(first.m_about) : null,
    project: first.m_project
      ? { id: first.m_project, memoryMode: first.m_mode!, instructions: c.open(first.m_instructions ?? "") }
      : null,
    models: { thread: first.m_thread_model, project: first.m_project_model },
    hasAttachments: first.m_files,
  };
}

/**
 * Takes one item out of a thread (an API client deleting a conversation's item): its replies are linked to its
 * parent, so the rest of the branch stays, and the active leaf moves back when it was this item. One transaction.
 */
export async function removeItem(db: Db, threadId: string, itemId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const [t] = await tx.$queryRaw<{ activeLeafId: string | null }[]>`
      SELECT "activeLeafId" FROM "Thread" WHERE id = ${threadId} FOR UPDATE
    `;
    const item = t && (await tx.item.findFirst({ where: { id: itemId, threadId }, select: { parentId: true } }));
    if (!item) return false;
    await tx.item.updateMany({ where: { parentId: itemId }, data: { parentId: item.parentId } });
    await tx.item.delete({ where: { id: itemId } });
    if (t.activeLeafId === itemId)
      await tx.thread.update({ where: { id: threadId }, data: { activeLeafId: item.parentId } });
    return true;
  });
}

export class PrismaSession implements Session {
  constructor(
    private readonly db: Db,
    private readonly threadId: string,
    /** The thread owner's cipher (lib/user-context.ts). */
    private readonly cipher: ContentCipher,
  ) {}

  getSessionId(): string {
    return this.threadId;
  }

  async getItems(limit?: number): Promise<SessionItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const t = await this.db.thread.findUnique({ where: { id: this.threadId }, select: { activeLeafId: true } });
    if (!t) throw new NotFoundError("thread");
    return pathItems(this.db, this.threadId, t.activeLeafId, limit ?? 2_147_483_647, this.cipher);
  }

  async addItems(items: NewItem[]): Promise<SessionItem[]> {
    if (!items.length) return [];
    const added = await appendItems(this.db, this.threadId, items, { cipher: this.cipher });
    if (!added.length) throw new NotFoundError("thread");
    return added;
  }

  async popItem(): Promise<SessionItem | null> {
    const c = this.cipher;
    return this.db.$transaction(async (tx) => {
      const [t] = await tx.$queryRaw<{ activeLeafId: string | null }[]>`
        SELECT "activeLeafId" FROM "Thread" WHERE id = ${this.threadId} FOR UPDATE
      `;
      if (!t) throw new NotFoundError("thread");
      if (!t.activeLeafId) return null;
      const [leaf] = await tx.$queryRaw<ItemRow[]>`
        DELETE FROM "Item" d WHERE d.id = ${t.activeLeafId} RETURNING ${itemColumns("d")}
      `;
      await tx.thread.update({ where: { id: this.threadId }, data: { activeLeafId: leaf?.parentId ?? null } });
      return leaf ? openItem(c, leaf) : null;
    });
  }

  async clearSession(): Promise<void> {
    await this.db.$transaction([
      this.db.summary.deleteMany({ where: { threadId: this.threadId } }),
      this.db.$executeRaw`UPDATE "Item" SET "parentId" = NULL WHERE "threadId" = ${this.threadId}`,
      this.db.item.deleteMany({ where: { threadId: this.threadId } }),
      this.db.thread.update({ where: { id: this.threadId }, data: { activeLeafId: null } }),
    ]);
  }
}
