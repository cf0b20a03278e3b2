// Step 1 of a chat turn (lib/chat/turn.ts): the request, validated, and the user's question with an empty answer
// saved in one statement that also checks the thread is the user's and the session may act (send, edit, regenerate).
import { type UserContext } from "@/lib/user-context";
import { sharedThreadContext, writeContext } from "@/lib/projects/access";
import { assertSessionMayAct, type SessionProof } from "@/lib/auth/session-check";
import { type ContentCipher } from "@/lib/crypto/content";
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { forModel, resolveConnectionCached, type ModelConnection } from "@/lib/llm/connection";
import { chooseModel } from "@/lib/llm/models";
import { assertDrafts, attachmentIdsSchema, bindToMessage, copyAttachments, draftsOf } from "@/lib/attachments/store";
import { appendItemsMeta, type AppendMeta, type NewItem, type SessionItem } from "@/lib/memory/session";

import { loadContext } from "./context";
import { createThread } from "./threads";
import { provisionalTitle } from "./titles";
import { AppError, AttachmentGoneError, NotFoundError } from "@/lib/errors";
import { cleanText } from "@/lib/text/policy";
import { turnStep } from "@/lib/ops/turn-timeline";
import { timeZoneSchema } from "./today";

/** What a user is told when a message is too long. */
export const messageLimit = (max: number) => `Messages are limited to ${max.toLocaleString("en-US")} characters.`;

export function messageSchema({ mayBeEmpty = false } = {}) {
  const max = getConfig().chat.maxMessageChars;
  const limit = messageLimit(max);
  return z
    .string({ error: "Type a message." })
    .transform(cleanText)
    .pipe(
      z
        .string()
        .max(max, limit)
        .refine((s) => mayBeEmpty || s.trim().length > 0, "Type a message."),
    );
}

const id = z.string().trim().min(1).max(64);
/** A model picked for this turn (a new chat's pick, or "regenerate with"); checked against the admin's list. */
const model = z.string().trim().min(1).max(200).optional();
/** Built once per message limit: building the schema took 0.8 ms of every turn, checking a request 2 µs. */
let built: { max: number; schema: ReturnType<typeof buildTurnRequestSchema> } | undefined;
export function turnRequestSchema() {
  const max = getConfig().chat.maxMessageChars;
  if (built?.max !== max) built = { max, schema: buildTurnRequestSchema() };
  return built.schema;
}

function buildTurnRequestSchema() {
  const content = messageSchema();
  return z.discriminatedUnion("kind", [
    z
      .object({
        kind: z.literal("send"),
        threadId: id.optional(),
        // A message may be its files alone.
        content: messageSchema({ mayBeEmpty: true }),
        temporary: z.boolean().optional(),
        // A new thread in this project (ignored when threadId is given).
        projectId: id.optional(),
        // A new thread in a shared project seen by its author alone (lib/projects/access.ts).
        private: z.boolean().optional(),
        model,
        /** Files uploaded for this message (lib/attachments/store.ts). */
        attachments: attachmentIdsSchema.optional(),
        timeZone: timeZoneSchema,
      })
      .refine((r) => r.content.trim().length > 0 || !!r.attachments?.length, {
        message: "Type a message.",
        path: ["content"],
      }),
    // The browser's time zone: the model is told the user's date (./today.ts).
    z.object({ kind: z.literal("edit"), threadId: id, itemId: id, content, timeZone: timeZoneSchema }),
    z.object({ kind: z.literal("regenerate"), threadId: id, itemId: id, model, timeZone: timeZoneSchema }),
  ]);
}
export type TurnRequest = z.infer<ReturnType<typeof turnRequestSchema>>;

export type Prepared = {
  threadId: string;
  userItem: SessionItem;
  assistant: SessionItem;
  conn: ModelConnection;
  firstExchange: boolean;
  meta: AppendMeta;
  /** Why another model than the one picked answers (it was taken off the list), or null. */
  modelNote: string | null;
  /** Whether the thread has attachments (its documents and pictures go with the turn: lib/attachments/prompt.ts). */
  hasAttachments: boolean;
};
const NO_META: AppendMeta = {
  temporary: false,
  memoryPaused: false,
  memoryReview: false,
  aboutSummary: null,
  project: null,
  models: { thread: null, project: null },
  hasAttachments: false,
};

/** What the three kinds of request share while their question and answer are saved. */
/** The user's context (db, userId, cipher `c`) while their question and answer are saved. */
type Preparing = {
  u: UserContext;
  db: Db;
  userId: string;
  c: ContentCipher;
  session?: SessionProof;
  conn: ModelConnection;
};

/**
 * Step 1 with the context made once for the whole turn: whose rows it writes (the user's, or a shared project's
 * account acting as the user: lib/projects/access.ts). No read of its own first: the append checks whose thread it
 * is and who may continue it. The user's own rows are tried, or, for a thread this instance has seen shared, the
 * project's; refused, the thread or project is looked up and the step runs again under its key (a refused attempt
 * writes nothing).
 */
export async function prepareAs(me: UserContext, req: TurnRequest, session?: SessionProof) {
  const guess = (req.threadId && (await sharedThreadContext(me, req.threadId))) || me;
  try {
    return { u: guess, p: await prepare(guess, req, session) };
  } catch (e) {
    const projectId = req.kind === "send" && !req.temporary ? req.projectId : undefined;
    // Files uploaded to a shared project are its account's drafts: not found among the user's own either.
    const elsewhere = e instanceof NotFoundError || e instanceof AttachmentGoneError;
    if (!elsewhere || (!req.threadId && !projectId)) throw e;
    const u = await writeContext(me, { threadId: req.threadId, projectId });
    if (u.userId === guess.userId) throw e;
    return { u, p: await prepare(u, req, session) };
  }
}

/** Step 1: validate and save the question and an empty answer. */
export async function prepare(u: UserContext, req: TurnRequest, session?: SessionProof): Promise<Prepared> {
  const { db, userId } = u;
  const attached = req.kind === "send" ? (req.attachments ?? []) : [];
  // In a shared project the files were uploaded to its account, sealed with its key: the member's own drafts only.
  const { addedById } = draftsOf(u);
  const [state] = await Promise.all([resolveConnectionCached(db), assertDrafts(db, userId, attached, addedById)]);
  if (!state.configured) throw new AppError(state.reason, 409);
  const turnPick = req.kind === "edit" ? undefined : req.model;
  // The thread's and its project's picks come back from the append (the same statement); the answer's row is
  // written with the turn's own pick or the default, and corrected in the rare turn that differs.
  const guess = chooseModel(state.models, turnPick).model;
  const s: Preparing = { u, db, userId, c: u.cipher, session, conn: forModel(state.connection, guess) };
  const prepared = await prepareKind(s, req);
  const facts = prepared.meta.models;
  const { model, note } = chooseModel(state.models, turnPick, facts.thread, facts.project);
  const assistant = { ...prepared.assistant, model: model.id };
  if (model.id !== guess.id) await db.item.update({ where: { id: assistant.id }, data: { model: model.id } });
  // The files go with the question just saved (they were checked to be the user's unsent ones above).
  await bindToMessage(db, userId, attached, prepared.threadId, prepared.userItem.id, addedById);
  turnStep("saved");
  return {
    ...prepared,
    assistant,
    conn: forModel(state.connection, model),
    modelNote: note,
    hasAttachments: prepared.meta.hasAttachments || attached.length > 0,
  };
}

async function prepareKind(s: Preparing, req: TurnRequest): Promise<Made> {
  const { db, userId } = s;
  if (req.kind === "send") return prepareSend(s, req);
  const target = await db.item.findFirst({
    where: { id: req.itemId, threadId: req.threadId, thread: { userId } },
    select: { id: true, parentId: true, role: true, status: true },
  });
  if (!target) throw new NotFoundError("thread");
  return req.kind === "edit" ? prepareEdit(s, req, target) : prepareRegenerate(s, req, target);
}

type Made = Omit<Prepared, "modelNote" | "hasAttachments">;

type Target = { id: string; parentId: string | null; role: string; status: string };
const placeholder = (conn: ModelConnection): NewItem => ({
  role: "assistant",
  status: "streaming",
  model: conn.chatModel,
});

// Whether the session may act is folded into the append; a refused append says why (ended session, or not yours).
async function refused(s: Preparing): Promise<never> {
  if (s.session) await assertSessionMayAct(s.db, s.u.actorId, s.session);
  throw new NotFoundError("thread");
}

async function prepareSend(s: Preparing, req: Extract<TurnRequest, { kind: "send" }>): Promise<Made> {
  // A new thread is written before the append, so its first message checks the session first
  // (an ended session must leave nothing behind).
  if (!req.threadId && s.session) await assertSessionMayAct(s.db, s.u.actorId, s.session);
  const threadId =
    req.threadId ??
    (
      await createThread(s.u, {
        temporary: req.temporary,
        title: provisionalTitle(req.content),
        projectId: req.temporary ? null : req.projectId,
        private: req.private,
        // A model picked before the first message stays the thread's.
        model: req.model === s.conn.chatModel ? req.model : null,
      })
    ).id;
  const { items: added, meta } = await appendItemsMeta(
    s.db,
    threadId,
    [{ role: "user", content: req.content }, placeholder(s.conn)],
    { as: s.u, session: s.session, cipher: s.c },
  );
  if (!added.length) return refused(s);
  const firstExchange = added[0].position === 0;
  return { threadId, userItem: added[0], assistant: added[1], conn: s.conn, firstExchange, meta: meta ?? NO_META };
}

async function prepareEdit(s: Preparing, req: Extract<TurnRequest, { kind: "edit" }>, target: Target): Promise<Made> {
  if (target.role !== "user") throw new AppError("Only your own messages can be edited.", 400);
  const { items: added, meta } = await appendItemsMeta(
    s.db,
    req.threadId,
    [{ role: "user", content: req.content }, placeholder(s.conn)],
    { parent: target.parentId, as: s.u, session: s.session, cipher: s.c },
  );
  if (!added.length) return refused(s);
  const [userItem, assistant] = added;
  // The edited message keeps its files, as the other chat apps keep them (each branch holds its own copy).
  await copyAttachments(s.db, s.userId, target.id, userItem.id);
  return { threadId: req.threadId, userItem, assistant, conn: s.conn, firstExchange: false, meta: meta ?? NO_META };
}

/** Regenerate (a new branch) or retry (a failed answer is replaced). */
async function prepareRegenerate(
  s: Preparing,
  req: Extract<TurnRequest, { kind: "regenerate" }>,
  target: Target,
): Promise<Made> {
  if (target.role !== "assistant" || !target.parentId) throw new AppError("Only answers can be regenerated.", 400);
  const parentId = target.parentId;
  const { items: added, meta } = await appendItemsMeta(s.db, req.threadId, [placeholder(s.conn)], {
    parent: parentId,
    as: s.u,
    session: s.session,
    cipher: s.c,
  });
  if (!added.length) return refused(s);
  // Replaced by the new answer (removed after the append, so a refused session changes nothing).
  if (target.status === "failed") await s.db.item.deleteMany({ where: { id: target.id, status: "failed" } });
  // The question this answer belongs to (after tool rounds, walk back to it).
  const path = await loadContext(s.db, req.threadId, parentId, { budget: 1_000_000, maxItems: 20, cipher: s.c });
  const parentRow = async () => {
    const row = await s.db.item.findUniqueOrThrow({ where: { id: parentId } });
    return { ...row, content: s.c.open(row.content) };
  };
  const userItem = [...path.window].reverse().find((i) => i.role === "user") ?? (await parentRow());
  return {
    threadId: req.threadId,
    userItem: { ...userItem, toolCalls: null } as unknown as SessionItem,
    assistant: added[0],
    conn: s.conn,
    firstExchange: false,
    meta: meta ?? NO_META,
  };
}
