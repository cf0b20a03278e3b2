// Attachments as stored: uploaded first (a draft of the composer, bound to no message), then bound to the user's
// message it was sent with. The file and its text are sealed with the user's key (crypto-shredded with the account);
// every read is by the owner's id, so another user's attachment is "not found" like one that does not exist.
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { inSharedProject, type UserContext } from "@/lib/user-context";
import type { ContentCipher } from "@/lib/crypto/content";
import { attachmentLimits } from "./limits";
import { AppError, AttachmentGoneError, NotFoundError } from "@/lib/errors";
import { cleanText, cutGraphemes } from "@/lib/text/policy";
import { estimateTokens } from "@/lib/memory/tokens";
import { sniff } from "./sniff";
import { extractText } from "./extract";
import type { Source } from "./prompt";
import { rememberParsed, splitPassages } from "./passages";
import { INLINE_TOKENS, passageRows } from "./passage-index";
import crypto from "node:crypto";
import { discardBytes, readBytes, storeBytes } from "./file-store";
import { queuePassageVectors } from "./vectors";
import { Prisma } from "@/lib/generated/prisma/client";

export type AttachmentKind = "image" | "document";
/** What the composer and the thread show of an attachment. */
export type AttachmentMeta = {
  id: string;
  name: string;
  mime: string;
  kind: AttachmentKind;
  bytes: number;
  pages: number | null;
};

/** Attachments sent with one message at most. */
export const MAX_PER_MESSAGE = 10;
/** Uploaded but never sent: removed after this long. */
export const DRAFT_HOURS = 24;

export const attachmentIdsSchema = z
  .array(z.string().trim().min(1).max(64))
  .max(MAX_PER_MESSAGE, `At most ${MAX_PER_MESSAGE} attachments per message.`);

const megabytes = (n: number) => `${(n / 1024 / 1024).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;

/** The name as shown: its last path part (never a path), cleaned, at most 200 characters. */
export function displayName(raw: string): string {
  const base = cleanText(raw).split(/[\\/]/).pop()?.trim() ?? "";
  const safe = base.replace(/^\.+/, "").trim();
  return cutGraphemes(safe || "file", 200);
}

/**
 * Whose drafts a context's are: the user's own, or in a shared project (its account's rows) the member's uploads
 * alone, so no member sends or removes another's.
 */
export const draftsOf = (u: Pick<UserContext, "userId" | "actorId">) => ({
  userId: u.userId,
  addedById: inSharedProject(u) ? u.actorId : null,
});

/** A file's size checked before it is read whole (the request's declared length, or the bytes read so far). */
export function assertFileSize(bytes: number, max: number, name = "This file") {
  if (bytes > max) throw new AppError(`${name} is ${megabytes(bytes)}; files are limited to ${megabytes(max)}.`, 413);
}

/**
 * Reads, checks and stores one uploaded file as a draft of the user's composer, or (`sentWith`: a file an import
 * brings back) as a file of that message, under the same checks.
 */
export async function saveUpload(
  u: UserContext,
  rawName: string,
  bytes: Uint8Array,
  sentWith?: { threadId: string; itemId: string },
): Promise<AttachmentMeta> {
  const name = displayName(rawName);
  const limits = await attachmentLimits(u.db);
  assertFileSize(bytes.length, limits.maxFileBytes, `“${name}”`);
  await assertRoom(u.db, u.userId, bytes.length, limits.maxUserBytes);
  const { kind, mime } = await sniff(bytes, name);
  const doc = kind === "document" ? await extractText(bytes, mime) : null;
  const c = u.cipher;
  const tokens = doc ? estimateTokens(doc.text) : 0;
  const stored = await storeBytes(c, bytes);
  // The file and its passages (what the message search finds) are stored together or not at all.
  const id = `c${crypto.randomUUID().replaceAll("-", "")}`;
  // Split outside the transaction (on the embedded database a transaction holds the one connection).
  // Only a short document is split here (searchable at once); a long one's split, stemming and counting is the
  // sweeper's and its first turn's, off the upload (a burst of long uploads held the server past a second).
  const inline = !!doc && tokens <= INLINE_TOKENS;
  const passages = doc && inline ? splitPassages({ id, name, text: doc.text, tokens, pages: doc.pages }) : [];
  const rows = inline ? passageRows(c, { userId: u.userId, attachmentId: id }, passages) : [];
  // The file and (a short document's) passages, what the message search finds, are stored together or not at all,
  // in one batch (no work between the statements while the embedded database's one connection is held).
  const create = u.db.attachment.create({
    data: {
      id,
      userId: u.userId,
      threadId: sentWith?.threadId,
      itemId: sentWith?.itemId,
      name: c.seal(name),
      mime,
      kind,
      bytes: bytes.length,
      data: stored.data,
      objectKey: stored.objectKey,
      text: doc ? c.seal(doc.text) : null,
      pages: doc?.pages ?? null,
      tokens,
      passagesIndexed: inline,
      addedById: draftsOf(u).addedById,
    },
    select: { id: true },
  });
  const written = rows.length
    ? u.db.$transaction([create, u.db.attachmentPassage.createMany({ data: rows })]).then(([r]) => r)
    : create;
  const row = await Promise.resolve(written).catch(async (e: unknown) => {
    await discardBytes(stored);
    throw e;
  });
  if (doc) {
    if (inline) rememberParsed({ id: row.id, name, tokens, pages: doc.pages }, passages);
    // Its passages by meaning, off the request's path (a long one's search rows: the sweeper's).
    await queuePassageVectors(u.db, u.userId, row.id);
  }
  return { id: row.id, name, mime, kind, bytes: bytes.length, pages: doc?.pages ?? null };
}

async function assertRoom(db: Db, userId: string, adding: number, max: number) {
  const used = (await db.attachment.aggregate({ where: { userId }, _sum: { bytes: true } }))._sum.bytes ?? 0;
  if (used + adding > max)
    throw new AppError(
      `Your attachments take ${megabytes(used)} of the ${megabytes(max)} each person may keep: delete chats with large files first.`,
      413,
    );
}

/** Checks that each id is one of the user's unsent attachments (before the message is saved). */
export async function assertDrafts(db: Db, userId: string, ids: string[], addedById: string | null = null) {
  if (!ids.length) return;
  const unique = [...new Set(ids)];
  const n = await db.attachment.count({ where: { id: { in: unique }, userId, addedById, itemId: null } });
  if (n !== unique.length) throw new AttachmentGoneError();
}

/**
 * Binds the drafts to the message they were sent with, in the order the composer listed them (uploads finish in any
 * order; the message shows its files, and the model gets its pictures, as the user attached them).
 */
export async function bindToMessage(
  db: Db,
  userId: string,
  ids: string[],
  threadId: string,
  itemId: string,
  addedById: string | null = null,
) {
  if (!ids.length) return;
  await db.$executeRaw`
    UPDATE "Attachment" a
    SET "threadId" = ${threadId}, "itemId" = ${itemId},
        "createdAt" = timezone('UTC', now())::timestamp(3) + (x.n * interval '1 millisecond')
    FROM unnest(${[...new Set(ids)]}::text[]) WITH ORDINALITY AS x(id, n)
    WHERE a.id = x.id AND a."userId" = ${userId} AND a."itemId" IS NULL
      AND a."addedById" IS NOT DISTINCT FROM ${addedById}::text`;
}

/** An edited message's files, copied onto its new version with their passages (one statement; the old branch keeps
 *  its own). */
export async function copyAttachments(db: Db, userId: string, fromItemId: string, toItemId: string) {
  await db.$executeRaw`
    WITH src AS MATERIALIZED (
      SELECT id AS old, 'c' || replace(gen_random_uuid()::text, '-', '') AS new
      FROM "Attachment" WHERE "itemId" = ${fromItemId} AND "userId" = ${userId}
    ), files AS (
      INSERT INTO "Attachment" (id, "userId", "threadId", "itemId", name, mime, kind, bytes, data, "objectKey", text,
                                pages, tokens, "passagesIndexed", "addedById", "createdAt")
      SELECT s.new, "userId", "threadId", ${toItemId}, name, mime, kind, bytes, data, "objectKey", text, pages, tokens,
             "passagesIndexed", "addedById", "createdAt"
      FROM "Attachment" a JOIN src s ON s.old = a.id
    )
    INSERT INTO "AttachmentPassage" (id, "attachmentId", "userId", position, page, content, "searchTokens")
    SELECT 'c' || replace(gen_random_uuid()::text, '-', ''), s.new, p."userId", p.position, p.page, p.content,
           p."searchTokens"
    FROM "AttachmentPassage" p JOIN src s ON s.old = p."attachmentId"`;
}

/** One of the user's attachments, opened (the file's bytes, and a document's text). */
export async function openAttachment(u: UserContext, id: string) {
  const row = await u.db.attachment.findFirst({ where: { id, userId: u.userId } });
  if (!row) throw new NotFoundError("item");
  const c = u.cipher;
  return {
    ...metaOf(row, c),
    data: await readBytes(c, row),
    text: row.text === null ? null : c.open(row.text),
  };
}

/** The documents sent with one of the user's messages, with their text (learning reads them like the message). */
export async function documentsOfMessage(u: UserContext, itemId: string) {
  const rows = await u.db.attachment.findMany({
    where: { itemId, userId: u.userId, kind: "document" },
    select: { name: true, text: true },
    orderBy: { createdAt: "asc" },
  });
  return rows.map((r) => ({ name: u.cipher.open(r.name), text: r.text === null ? "" : u.cipher.open(r.text) }));
}

/** Removes an attachment not yet sent (the composer's chip); a sent one goes with its message. */
export async function removeDraft(u: UserContext, id: string) {
  const r = await u.db.attachment.deleteMany({ where: { id, itemId: null, ...draftsOf(u) } });
  if (!r.count) throw new NotFoundError("item");
}

type MetaRow = { id: string; name: string; mime: string; kind: AttachmentKind; bytes: number; pages: number | null };
export const metaOf = (r: MetaRow, c: ContentCipher): AttachmentMeta => ({
  id: r.id,
  name: c.open(r.name),
  mime: r.mime,
  kind: r.kind,
  bytes: r.bytes,
  pages: r.pages,
});
export const META_SELECT = { id: true, name: true, mime: true, kind: true, bytes: true, pages: true } as const;

/** Where an answer's passages came from, as the thread shows it ("report.pdf, p. 4"). */
export type SourceView = { id: string; name: string; page: number | null };

/** The thread view's attachments: the files by message, and the files and pages each answer drew on. */
export async function attachmentsInView(db: Db, c: ContentCipher, threadId: string, itemIds: string[]) {
  const byItem = new Map<string, AttachmentMeta[]>();
  const sources = new Map<string, SourceView[]>();
  const rows = await db.attachment.findMany({
    where: { threadId, itemId: { not: null } },
    select: { ...META_SELECT, itemId: true },
    orderBy: { createdAt: "asc" },
  });
  if (!rows.length) return { byItem, sources };
  const metas = new Map(rows.map((r) => [r.id, metaOf(r, c)]));
  for (const r of rows) byItem.set(r.itemId!, [...(byItem.get(r.itemId!) ?? []), metas.get(r.id)!]);
  const answers = await db.item.findMany({
    where: { id: { in: itemIds }, role: "assistant", sources: { not: Prisma.DbNull } },
    select: { id: true, sources: true },
  });
  for (const a of answers) {
    const list = ((a.sources as Source[] | null) ?? []).flatMap((s) => {
      const m = metas.get(s.a);
      return m ? [{ id: m.id, name: m.name, page: s.p }] : [];
    });
    if (list.length) sources.set(a.id, list);
  }
  return { byItem, sources };
}

/** Drafts never sent, older than DRAFT_HOURS (the sweeper's). */
export async function sweepDrafts(db: Db, now = new Date()) {
  const before = new Date(now.getTime() - DRAFT_HOURS * 3_600_000);
  return (await db.attachment.deleteMany({ where: { itemId: null, createdAt: { lt: before } } })).count;
}
