// Stores one imported conversation as a Mnemo thread, all or nothing: the
// thread, every message of every branch (with its original time and id as
// sourceRef) and the active branch, in one transaction. Text is sealed like
// any other message when encryption at rest is on.
import { displayName } from "@/lib/attachments/store";
import { MAX_TEXT_CHARS } from "@/lib/attachments/extract";
import { splitPassages } from "@/lib/attachments/passages";
import { indexPassages } from "@/lib/attachments/passage-index";
import crypto from "node:crypto";
import type { Db } from "@/lib/db/client";
import { sealJson, type ContentCipher } from "@/lib/crypto/content";
import { estimateTokens, messageTokens } from "@/lib/memory/tokens";
import { cleanDeep, cutGraphemes } from "@/lib/text/policy";
import {
  MAX_STORED_CONVERSATION_CHARS,
  MAX_STORED_MESSAGE_CHARS,
  SHORT_STORED_MESSAGE_CHARS,
  storedMessageText,
} from "@/lib/chat/stored-message";
import type { FileRef, ImportedConversation, ImportedProject } from "./conversation";
import { feedbackRows } from "./feedback";

const INSERT_BATCH = 500;

export type WriteResult =
  | {
      status: "imported";
      threadId: string;
      messages: number;
      branches: number;
      projectId: string | null;
      /** Ratings of its answers that came with it. */
      feedback: number;
      /** The files its messages name that a zip may carry, with the message each goes to. */
      fileRefs: Array<FileRef & { itemId: string }>;
    }
  | { status: "duplicate" };

const isUniqueViolation = (e: unknown) =>
  (e as { code?: string })?.code === "P2002" ||
  /unique constraint|duplicate key/i.test(String((e as Error)?.message ?? ""));

export async function writeConversation(
  db: Db,
  userId: string,
  conv: ImportedConversation,
  cipher: ContentCipher,
): Promise<WriteResult> {
  // Every string the file gave (ids, model and tool names, not only the text) as PostgreSQL can store it: a NUL
  // in a message's id lost the whole conversation.
  conv = cleanDeep(conv);
  try {
    return await db.$transaction(
      async (tx) => {
        const existing = await tx.thread.findFirst({
          where: { userId, OR: [{ importRef: conv.ref }, ...(conv.sameAs ? [{ id: conv.sameAs }] : [])] },
          select: { id: true },
        });
        if (existing) return { status: "duplicate" } as const;

        const rows = itemRows(conv, userId, cipher);
        const first = rows[0]?.createdAt ?? new Date().toISOString();
        const last = rows.reduce((max, r) => (r.createdAt > max ? r.createdAt : max), first);
        const created = conv.createdAt?.toISOString() ?? first;
        const projectId = conv.project ? await importedProject({ db: tx as Db, userId, cipher }, conv.project) : null;
        const thread = await tx.thread.create({
          data: {
            userId,
            projectId,
            title: conv.title ? cipher.seal(cutGraphemes(conv.title, 200)) : null,
            archived: !!conv.archived,
            importSource: conv.format,
            importRef: conv.ref,
            createdAt: new Date(created < first ? created : first),
            lastActivityAt: new Date(conv.updatedAt && conv.updatedAt.toISOString() > last ? conv.updatedAt : last),
          },
          select: { id: true },
        });
        for (let i = 0; i < rows.length; i += INSERT_BATCH) {
          await tx.$executeRaw`
            INSERT INTO "Item" (id, "threadId", "userId", "parentId", position, role, content, "searchTokens", "toolCalls", "toolCallId",
                               "toolName", status, model, tokens, "sourceRef", "createdAt", "updatedAt")
           SELECT x.id, ${thread.id}, ${userId}, x."parentId", x.position, x.role::"ItemRole", x.content, x."searchTokens", x."toolCalls", x."toolCallId",
                  x."toolName", x.status::"ItemStatus", x.model, x.tokens, x."sourceRef", x."createdAt", x."createdAt"
           FROM jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + INSERT_BATCH))}::jsonb) AS x(id text, "parentId" text, position int, role text, content text, "searchTokens" text,
                  "toolCalls" jsonb, "toolCallId" text, "toolName" text, status text, model text, tokens int, "sourceRef" text,
                  "createdAt" timestamp)
          `;
        }
        const files = importedFiles(conv, rows, { userId, threadId: thread.id, cipher });
        if (files.length) await tx.attachment.createMany({ data: files.map((f) => f.row) });
        for (const { row, doc } of files)
          await indexPassages(tx as Db, cipher, { userId, attachmentId: row.id }, splitPassages(doc));
        let feedback = 0;
        if (conv.feedback?.length) {
          // Rows are the messages in order; the messages keep the other app's ids uncut.
          const items = new Map(rows.map((r, i) => [conv.messages[i].ref, { ...r, createdAt: new Date(r.createdAt) }]));
          const data = feedbackRows(conv.feedback, items, { userId, threadId: thread.id, cipher });
          if (data.length) feedback = (await tx.feedback.createMany({ data })).count;
        }
        const active = rows.find((r) => r.sourceRef === conv.activeRef) ?? rows.at(-1);
        await tx.thread.update({
          where: { id: thread.id },
          data: { activeLeafId: active?.id ?? null, nextPosition: rows.length },
        });
        const parents = new Set(rows.map((r) => r.parentId));
        const leaves = rows.filter((r) => !parents.has(r.id)).length;
        return {
          status: "imported",
          threadId: thread.id,
          messages: rows.length,
          branches: Math.max(0, leaves - 1),
          projectId,
          feedback,
          // The files its messages name that a zip may carry (attached once the zip has been read).
          fileRefs: conv.messages.flatMap((m, i) => (m.fileRefs ?? []).map((f) => ({ ...f, itemId: rows[i].id }))),
        } as const;
      },
      { timeout: 120_000 },
    );
  } catch (e) {
    if (isUniqueViolation(e)) return { status: "duplicate" }; // the same file imported twice at once
    throw e;
  }
}

/**
 * The files an export carried the text of, as attachments of their messages (rows are the messages in order), each
 * with its text as a document, for its passages.
 */
function importedFiles(
  conv: ImportedConversation,
  rows: Array<{ id: string }>,
  at: { userId: string; threadId: string; cipher: ContentCipher },
) {
  return conv.messages.flatMap((m, i) =>
    (m.attachments ?? []).map((a) => {
      const text = a.text.length > MAX_TEXT_CHARS ? a.text.slice(0, MAX_TEXT_CHARS) : a.text;
      const bytes = Buffer.from(text, "utf8");
      const name = displayName(a.name);
      const row = {
        id: crypto.randomUUID(),
        userId: at.userId,
        threadId: at.threadId,
        itemId: rows[i].id,
        name: at.cipher.seal(name),
        mime: "text/plain",
        kind: "document" as const,
        bytes: bytes.length,
        data: at.cipher.seal(bytes.toString("base64")),
        text: at.cipher.seal(text),
        tokens: estimateTokens(text),
      };
      return { row, doc: { id: row.id, name, text, tokens: row.tokens, pages: null } };
    }),
  );
}

/**
 * The Mnemo project an imported project lands in: the same one when it is this account's own (Mnemo's export
 * imported back), the one an earlier import made, or a new one of the same name.
 */
export async function importedProject(
  u: { db: Db; userId: string; cipher: ContentCipher },
  p: ImportedProject,
): Promise<string> {
  const { db, userId, cipher } = u;
  const found = await db.project.findFirst({
    where: { userId, OR: [{ importRef: p.ref }, ...(p.sameAs ? [{ id: p.sameAs }] : [])] },
    select: { id: true },
  });
  if (found) return found.id;
  const name = cutGraphemes(p.name.trim() || "Imported project", 80);
  const made = await db.project.create({
    data: {
      userId,
      name: cipher.seal(name),
      instructions: cipher.seal(cutGraphemes(p.instructions ?? "", 4000)),
      memoryMode: p.memoryMode ?? "shared",
      importRef: p.ref,
    },
    select: { id: true },
  });
  return made.id;
}

/**
 * A project the file lists on its own (Claude's projects.json, or a Mnemo project with no threads or memories):
 * made when missing; a project an import named after its id only (a conversation came before projects.json) gets
 * the file's name and instructions. A project the user has renamed or given instructions keeps them.
 */
export async function settleImportedProject(
  u: { db: Db; userId: string; cipher: ContentCipher },
  p: ImportedProject,
  placeholderName: string | null,
): Promise<"added" | "named" | "kept"> {
  const { db, userId, cipher } = u;
  const found = await db.project.findFirst({
    where: { userId, OR: [{ importRef: p.ref }, ...(p.sameAs ? [{ id: p.sameAs }] : [])] },
    select: { id: true, name: true, instructions: true },
  });
  if (!found) {
    await importedProject(u, p);
    return "added";
  }
  const data: { name?: string; instructions?: string } = {};
  const name = cutGraphemes(p.name.trim(), 80);
  if (placeholderName && name && name !== placeholderName && cipher.open(found.name) === placeholderName)
    data.name = cipher.seal(name);
  if (p.instructions && !cipher.open(found.instructions ?? "").trim())
    data.instructions = cipher.seal(cutGraphemes(p.instructions, 4000));
  if (!data.name && !data.instructions) return "kept";
  await db.project.update({ where: { id: found.id }, data });
  return "named";
}

/** The conversation's messages as Item rows: new ids, positions in tree order, times carried down when missing. */
function itemRows(conv: ImportedConversation, userId: string, cipher: ContentCipher) {
  const ids = new Map<string, string>();
  const times = new Map<string, string>();
  const fallback = (conv.createdAt ?? new Date()).toISOString();
  let stored = 0; // characters of the conversation kept so far
  return conv.messages.map((m, position) => {
    const id = crypto.randomUUID();
    ids.set(m.ref, id);
    const parentTime = m.parentRef ? times.get(m.parentRef) : undefined;
    const createdAt = m.createdAt?.toISOString() ?? parentTime ?? fallback;
    times.set(m.ref, createdAt);
    const max = stored < MAX_STORED_CONVERSATION_CHARS ? MAX_STORED_MESSAGE_CHARS : SHORT_STORED_MESSAGE_CHARS;
    const content = storedMessageText(m.content, "on import", max);
    stored += content.length;
    return {
      id,
      parentId: m.parentRef ? (ids.get(m.parentRef) ?? null) : null,
      position,
      role: m.role,
      content: cipher.seal(content),
      searchTokens: cipher.searchTokens(content),
      toolCalls: sealJson(cipher, m.toolCalls ?? null),
      toolCallId: m.toolCallId ?? null,
      toolName: m.toolName ?? null,
      status: m.interrupted ? "interrupted" : "complete",
      model: m.model ?? null,
      tokens: messageTokens(content, m.toolCalls ? JSON.stringify(m.toolCalls) : ""),
      sourceRef: cutGraphemes(m.ref, 200),
      createdAt,
    };
  });
}

/**
 * Takes a file's note out of an imported message once the file itself is attached to it ("[image not imported]"
 * said what the zip then brought in), sealed and indexed again like any message.
 */
export async function dropFileNote(db: Db, cipher: ContentCipher, itemId: string, note: string) {
  const item = await db.item.findUnique({ where: { id: itemId }, select: { content: true } });
  if (!item) return;
  const content = cipher.open(item.content);
  const at = content.indexOf(note);
  if (at < 0) return;
  const left = content.slice(0, at).replace(/\n\n$/, "");
  const right = content.slice(at + note.length).replace(/^\n\n/, "");
  const kept = left && right ? `${left}\n\n${right}` : left || right;
  await db.item.update({
    where: { id: itemId },
    data: { content: cipher.seal(kept), searchTokens: cipher.searchTokens(kept), tokens: messageTokens(kept, "") },
  });
}
