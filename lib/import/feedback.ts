// The user's ratings of answers in another app come along with the conversations: 👍/👎 and what they wrote with
// them. LibreChat and Open WebUI keep them on the messages (read with the conversation, stored in its transaction);
// ChatGPT keeps them in message_feedback.json beside conversations.json and Mnemo's own export in its "feedback"
// list, both read after the conversations and matched to the answers by the apps' own ids.
// They show on the answers as if given here. Until the user asks Mnemo to learn from the imported history they teach
// nothing; then one that can teach (a 👎, a rating with words, a correction) goes through the feedback job like one
// given here (lib/import/learn.ts). No memory's signals change (no memory took part in those answers).
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { COMMENT_MAX_CHARS } from "@/lib/memory/feedback";
import { enqueue } from "@/lib/jobs/queue";
import { cleanText, cutGraphemes } from "@/lib/text/policy";
import type { ImportedFeedback, ImportedSideFeedback } from "./conversation";

/** At most this many side-file ratings are read from one file (ChatGPT's list has one per rated answer). */
export const MAX_SIDE_FEEDBACK = 100_000;

/** 👍 or 👎 in any of the apps' spellings ("thumbsUp", "thumbs_down", 1, -1), else null. */
export function ratingOf(v: unknown): 1 | -1 | null {
  if (v === 1 || v === -1) return v;
  if (typeof v !== "string") return null;
  const s = v.toLowerCase().replace(/[^a-z]/g, "");
  if (s === "thumbsup" || s === "up" || s === "positive" || s === "like") return 1;
  if (s === "thumbsdown" || s === "down" || s === "negative" || s === "dislike") return -1;
  return null;
}

/** An app's tag key as words: "not-helpful" → "Not helpful", "com_ui_feedback_tag_not_matched" → "Not matched". */
export function tagWords(tag: string): string {
  const words = tag
    .replace(/^com_ui_feedback_tag_/, "")
    .replace(/[-_]+/g, " ")
    .trim();
  return words ? words[0].toUpperCase() + words.slice(1) : "";
}

/** The comment stored with a rating: the reasons picked, then the words written ("Not helpful: it ignored…"). */
export function feedbackComment(reasons: string[], written: unknown): string | null {
  const why = [...new Set(reasons.map((r) => cleanText(r).trim()).filter(Boolean))].join(", ");
  const said = typeof written === "string" ? cleanText(written).trim() : "";
  const comment = [why, said].filter(Boolean).join(": ");
  return comment ? cutGraphemes(comment, COMMENT_MAX_CHARS) : null;
}

type FeedbackRow = {
  userId: string;
  threadId: string;
  itemId: string;
  kind: "rating" | "correction";
  rating: number | null;
  comment: string | null;
  createdAt: Date;
  processedAt: Date | null;
};

/**
 * Feedback rows for the answers among `items` (by their ref in the other app). An app that kept several ratings of
 * one answer counts the latest; feedback on a message that is not an imported answer is left out.
 */
export function feedbackRows(
  found: ImportedFeedback[],
  items: Map<string, { id: string; role: string; createdAt: Date }>,
  to: { userId: string; threadId: string; cipher: ContentCipher },
): FeedbackRow[] {
  const rows = new Map<string, FeedbackRow>();
  const now = new Date();
  for (const f of found) {
    const item = items.get(f.messageRef);
    if (!item || item.role !== "assistant") continue;
    if (f.kind === "rating" ? f.rating === null : !f.comment) continue;
    const key = `${item.id}:${f.kind}`;
    const at = f.at ?? item.createdAt;
    const before = rows.get(key);
    if (before && before.createdAt > at) continue;
    rows.set(key, {
      userId: to.userId,
      threadId: to.threadId,
      itemId: item.id,
      kind: f.kind,
      rating: f.kind === "rating" ? f.rating : null,
      comment: f.comment ? to.cipher.seal(f.comment) : null,
      createdAt: at,
      // A plain 👍 teaches nothing (lib/memory/feedback.ts): handled. The rest waits for "learn from imports".
      processedAt: f.kind === "rating" && f.rating === 1 && !f.comment ? now : null,
    });
  }
  return [...rows.values()];
}

/**
 * Stores feedback read apart from its conversations, once they are all in: each conversation is found among the
 * user's imported threads (or, for Mnemo's export into the same account, by its id) and each answer by its id there.
 * A rating the user has since given the same answer in Mnemo is kept. Returns how many were added and how many
 * found no imported answer (a conversation left out of the file, a message the import does not keep).
 */
export async function storeSideFeedback(
  u: { db: Db; userId: string; cipher: ContentCipher },
  found: ImportedSideFeedback[],
): Promise<{ added: number; unmatched: number }> {
  const { db, userId, cipher } = u;
  const byConversation = new Map<string, ImportedSideFeedback[]>();
  for (const f of found) {
    const key = JSON.stringify([f.conversationRefs, f.sameAs ?? null]);
    byConversation.set(key, [...(byConversation.get(key) ?? []), f]);
  }
  let added = 0;
  let matched = 0;
  for (const group of byConversation.values()) {
    const { conversationRefs, sameAs } = group[0];
    const thread = await db.thread.findFirst({
      where: {
        userId,
        OR: [{ importRef: { in: conversationRefs } }, ...(sameAs ? [{ id: sameAs }] : [])],
      },
      select: { id: true },
    });
    if (!thread) continue;
    const refs = [...new Set(group.map((f) => f.messageRef))];
    const rows = await db.item.findMany({
      where: {
        threadId: thread.id,
        role: "assistant",
        OR: [{ sourceRef: { in: refs } }, ...(sameAs ? [{ id: { in: refs } }] : [])],
      },
      select: { id: true, sourceRef: true, role: true, createdAt: true },
    });
    const items = new Map<string, { id: string; role: string; createdAt: Date }>();
    for (const r of rows) {
      items.set(r.id, r);
      if (r.sourceRef) items.set(r.sourceRef, r);
    }
    const data = feedbackRows(group, items, { userId, threadId: thread.id, cipher });
    matched += group.filter((f) => items.has(f.messageRef)).length;
    if (data.length) added += (await db.feedback.createMany({ data, skipDuplicates: true })).count;
  }
  return { added, unmatched: found.length - matched };
}

/** How many imported ratings one "learn from imports" queues at most (each is one memory-model call). */
export const MAX_FEEDBACK_LESSONS = 500;

/**
 * Queues the feedback job for the imported ratings that can still teach, paced at the import learning's rate (one
 * every 60 / perMinute seconds), oldest first. Returns how many were queued.
 */
export async function queueImportedFeedback(db: Db, userId: string, perMinute: number): Promise<number> {
  const rows = await db.feedback.findMany({
    where: { userId, processedAt: null, item: { thread: { importSource: { not: null }, temporary: false } } },
    orderBy: { createdAt: "asc" },
    select: { id: true, updatedAt: true },
    take: MAX_FEEDBACK_LESSONS,
  });
  // Starting again while they wait adds no second job for the same rating.
  const waiting = await db.job.findMany({
    where: { userId, kind: "feedback", status: "queued" },
    select: { payload: true },
  });
  const queued = new Set(waiting.map((j) => (j.payload as { feedbackId?: string } | null)?.feedbackId));
  const todo = rows.filter((f) => !queued.has(f.id));
  const gap = 60_000 / Math.max(1, perMinute);
  const now = Date.now();
  await enqueue(
    db,
    todo.map((f, i) => ({
      kind: "feedback" as const,
      userId,
      payload: { feedbackId: f.id, version: f.updatedAt.toISOString() },
      runAt: new Date(now + i * gap),
      dedupeKey: `feedback:import:${f.id}:${now}`,
    })),
  );
  return todo.length;
}
