// Learning from feedback: 👍/👎 (with an optional "what was wrong?") on an
// answer, and corrections in the user's next message ("no, I meant…", "don't
// use bullet points"). Each signal is stored with the answer it is about
// (Feedback); the "feedback" job later asks the memory model for at most one
// durable lesson (a preference or a procedure), stored as a memory whose
// provenance is the feedback. The same lesson again raises its confidence
// instead of adding a copy. Never in temporary chats or while learning is paused.
import { atDailyLimit } from "@/lib/account/usage-limits";
import { z } from "zod";
import { isLocalEndpoint, recordSend } from "./disclosure";
import { type UserContext } from "@/lib/user-context";
import { onAnswerRated, procedureText, stepsSchema } from "./procedures";
import type { Db } from "@/lib/db/client";
import type { ModelConnection } from "@/lib/llm/connection";
import { anyCase, askMemoryModelJson } from "@/lib/llm/memory-json";
import { enqueue } from "@/lib/jobs/queue";
import { getConfig } from "@/lib/config";
import { AppError, NotFoundError, SecretRefusedError } from "@/lib/errors";
import { cleanText, cutGraphemes } from "@/lib/text/policy";
import { evidenceForgotten, modelChange } from "./writes";

export const COMMENT_MAX_CHARS = 1000;
export const rateInput = z.object({
  itemId: z.string().min(1).max(64),
  rating: z.union([z.literal(1), z.literal(-1), z.null()]),
  comment: z
    .string()
    .transform(cleanText)
    .pipe(z.string().trim().max(COMMENT_MAX_CHARS, `A comment is at most ${COMMENT_MAX_CHARS} characters.`))
    .optional(),
});

export type AnswerFeedback = { rating: 1 | -1 | null; comment: string | null };

/** The answer, if it is the user's and feedback may be taken on it now. */
async function rateableAnswer(db: Db, userId: string, itemId: string) {
  const item = await db.item.findFirst({
    where: { id: itemId, role: "assistant", thread: { userId } },
    select: {
      id: true,
      threadId: true,
      status: true,
      thread: { select: { temporary: true, user: { select: { memoryPaused: true } } } },
    },
  });
  if (!item) throw new NotFoundError("answer");
  if (item.thread.temporary) throw new AppError("Temporary chats keep no feedback.", 400);
  if (item.thread.user.memoryPaused)
    throw new AppError("Learning is paused, so Mnemo takes no feedback. Resume it on the Memory page.", 409);
  if (item.status === "streaming") throw new AppError("Wait for the answer to finish before rating it.", 409);
  return item;
}

/** Sets, changes or (rating null) removes the user's rating of an answer; queues learning from it. */
export async function rateAnswer(u: UserContext, input: z.input<typeof rateInput>): Promise<AnswerFeedback> {
  const { db, userId } = u;
  const { itemId, rating, comment } = rateInput.parse(input);
  const item = await rateableAnswer(db, userId, itemId);
  if (rating === null) {
    await db.feedback.deleteMany({ where: { itemId: item.id, userId, kind: "rating" } });
    return { rating: null, comment: null };
  }
  const c = u.cipher;
  const sealed = comment ? c.seal(comment) : null;
  const before = await db.feedback.findUnique({
    where: { itemId_kind: { itemId: item.id, kind: "rating" } },
    select: { rating: true, comment: true },
  });
  const fb = await db.feedback.upsert({
    where: { itemId_kind: { itemId: item.id, kind: "rating" } },
    create: { userId, threadId: item.threadId, itemId: item.id, kind: "rating", rating, comment: sealed },
    update: { rating, comment: sealed, processedAt: null },
  });
  // A 👎 opens "what was wrong?": its lesson waits a grace period for the comment. A comment (or a change) queues a
  // newer job, and the older one finds the row changed and stands down: one memory-model call per rating. Any other
  // change of a rating waits the grace period too (only the comment a lone 👎 was waiting for goes at once), so
  // flipping it back and forth costs one more call at most, for where it settles.
  const awaitedComment = before?.rating === -1 && !before.comment && rating === -1 && !!comment;
  const grace = new Date(Date.now() + getConfig().memory.feedbackGraceSeconds * 1000);
  const runAt = (rating === -1 && !comment) || (before && !awaitedComment) ? grace : undefined;
  await enqueue(db, [
    { kind: "feedback", userId, payload: { feedbackId: fb.id, version: fb.updatedAt.toISOString() }, runAt },
  ]);
  await onAnswerRated(db, userId, item.id, rating);
  return { rating, comment: comment || null };
}

/** The user's ratings of these answers (for the thread view). */
export async function feedbackFor(u: UserContext, itemIds: string[]): Promise<Map<string, AnswerFeedback>> {
  const { db, userId } = u;
  if (!itemIds.length) return new Map();
  const rows = await db.feedback.findMany({
    where: { userId, kind: "rating", itemId: { in: itemIds } },
    select: { itemId: true, rating: true, comment: true },
  });
  const c = u.cipher;
  return new Map(
    rows.map((r) => [
      r.itemId,
      {
        rating: r.rating === 1 ? 1 : r.rating === -1 ? -1 : null,
        comment: r.comment === null ? null : c.open(r.comment),
      },
    ]),
  );
}

// A message that says the previous answer was wrong or how to answer instead.
const CORRECTION = [
  /^\s*(no|nope|not quite|wrong|incorrect)\b[\s,.!:;-]/i,
  /\b(that'?s|that is|this is|it'?s) (wrong|incorrect|not (right|correct|true|what i (meant|asked|wanted)))/i,
  /\bI (meant|said|asked)\b/i,
  /\b(don'?t|do not|stop|never) (use|using|add|adding|write|writing|give|giving|put|putting|include|including|answer|reply)\b/i,
  /\b(too|way too|much too) (long|short|verbose|wordy|formal|casual|technical|vague)\b/i,
];
export const looksLikeCorrection = (text: string) => CORRECTION.some((re) => re.test(text));

/** When the user's new message corrects the answer before it, records that as feedback on it and queues learning. */
export async function recordCorrection(
  u: UserContext,
  message: { id: string; parentId: string | null; content: string; threadId: string },
) {
  const { db, userId } = u;
  if (!message.parentId || !looksLikeCorrection(message.content)) return;
  const prev = await db.item.findFirst({
    where: { id: message.parentId, threadId: message.threadId, role: "assistant", status: "complete" },
    select: { id: true },
  });
  if (!prev) return;
  const c = u.cipher;
  const comment = c.seal(cutGraphemes(message.content, COMMENT_MAX_CHARS));
  const fb = await db.feedback.upsert({
    where: { itemId_kind: { itemId: prev.id, kind: "correction" } },
    create: { userId, threadId: message.threadId, itemId: prev.id, kind: "correction", comment },
    update: { comment, processedAt: null },
  });
  await enqueue(db, [{ kind: "feedback", userId, payload: { feedbackId: fb.id } }]);
}

export const lessonSchema = z.object({
  lesson: z
    .object({
      text: z.string().min(1).max(300),
      kind: anyCase(["preference", "procedure"]),
      steps: stepsSchema.optional().catch(undefined),
    })
    .nullable(),
  // A memory the answer used that the feedback shows is wrong, with its corrected text.
  correct: z
    .object({ id: z.string().min(1).max(64), text: z.string().min(1).max(500) })
    .nullable()
    .optional()
    .catch(null),
});

const INSTRUCTIONS = `You help a chat assistant learn from its user's feedback. You get one answer the assistant gave, the question it answered, and the user's feedback on it. Write at most ONE durable lesson about how this user wants to be answered in future conversations:
- a preference (style, length, format, tone, language, level of detail), e.g. "too long" -> "Prefers short answers";
- or a procedure they want followed for a kind of task: "text" names the task, "steps" lists what to do, in order.
Generalise from this one answer to a rule that will still be true next week, as a short third-person statement. If the feedback is only about a one-off mistake with no lasting lesson, or is simply positive, reply with null. Never include passwords, keys or account numbers.
If the answer relied on one of the listed memories and the feedback shows that memory is wrong, also give "correct": {"id": "<its id>", "text": "<corrected statement>"}.
Reply with JSON only: {"lesson": {"text": "...", "kind": "preference"}}, {"lesson": {"text": "<task>", "kind": "procedure", "steps": ["...", "..."]}} or {"lesson": null}.`;

/** The feedback job: distils one feedback row into a memory (or raises the confidence of the one it matches). */
export async function learnFromFeedback(
  u: UserContext,
  conn: ModelConnection,
  feedbackId: string,
  version?: string,
): Promise<"learned" | "reinforced" | "corrected" | "nothing"> {
  const { db } = u;
  const fb = await db.feedback.findFirst({
    where: { id: feedbackId, userId: u.userId },
    include: {
      item: { select: { id: true, content: true, parentId: true, threadId: true } },
      user: { select: { memoryPaused: true, memoryReview: true } },
    },
  });
  if (!fb || fb.processedAt || fb.user.memoryPaused) return "nothing";
  // Changed since this job was queued (a comment came): the newer job learns from it.
  if (version && fb.updatedAt.toISOString() !== version) return "nothing";
  const thread = await db.thread.findUnique({ where: { id: fb.threadId }, select: { temporary: true } });
  if (!thread || thread.temporary) return "nothing";
  const done = () => db.feedback.update({ where: { id: fb.id }, data: { processedAt: new Date() } });
  // An answer the user has since asked Mnemo to forget is not sent to the memory model.
  if (await evidenceForgotten(db, u.userId, { sourceItemId: fb.item.id })) {
    await done();
    return "nothing";
  }
  // A plain 👍 teaches nothing new; it is kept as a signal. Nor does a user at a daily limit get a model call for it.
  if ((fb.kind === "rating" && fb.rating === 1 && !fb.comment) || (await atDailyLimit(db, u.userId))) {
    await done();
    return "nothing";
  }
  const c = u.cipher;
  const question = fb.item.parentId
    ? await db.item.findFirst({ where: { id: fb.item.parentId, role: "user" }, select: { content: true } })
    : null;
  const said = fb.comment ? c.open(fb.comment) : "";
  // Every memory the model was given with the question, not only those the answer was seen to draw on: a
  // correction may be about one the attribution missed.
  const used = await db.memory.findMany({
    where: {
      userId: fb.userId,
      status: "active",
      // Nor one the user has since said not to mention, or whose time has run out: it goes to no model.
      muted: false,
      OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
      uses: { some: { itemId: fb.item.id } },
      // A private memory goes to the memory model only when it runs on this machine (lib/memory/disclosure.ts).
      ...(isLocalEndpoint(conn.baseURL) ? {} : { private: false }),
    },
    select: { id: true, text: true },
  });
  const usedList = used.length
    ? `\nMemories the model was given with the question:\n${used.map((m) => `- id=${m.id}: ${JSON.stringify(c.open(m.text))}`).join("\n")}`
    : "";
  const signal =
    fb.kind === "correction"
      ? `The user's next message, correcting the answer: ${JSON.stringify(said)}`
      : `Rating: ${fb.rating === 1 ? "thumbs up" : "thumbs down"}${said ? `; what the user wrote: ${JSON.stringify(said)}` : " (no comment)"}`;
  const parsed = await askMemoryModelJson(
    conn,
    INSTRUCTIONS,
    `Feedback on an answer.\nQuestion: ${question ? cutGraphemes(c.open(question.content), 2000) : "(unknown)"}\nAnswer: ${cutGraphemes(c.open(fb.item.content), 3000)}${usedList}\n${signal}`,
    lessonSchema,
    // In a shared project the member who rated pays for the lesson (the chat's author: lib/jobs/handlers.ts).
    { db, userId: u.actorId },
  );
  await recordSend(db, c, {
    userId: fb.userId,
    memoryIds: used.map((m) => m.id),
    model: conn.memoryModel,
    baseURL: conn.baseURL,
    client: "learning",
  }).catch(() => undefined);
  // Malformed output teaches nothing; retrying would ask the same.
  if (!parsed) {
    await done();
    return "nothing";
  }
  const corrected =
    parsed.correct && used.some((m) => m.id === parsed.correct!.id)
      ? await correctMemory(u, fb, parsed.correct, said)
      : false;
  if (!parsed.lesson) {
    await done();
    return corrected ? "corrected" : "nothing";
  }
  const started = new Date();
  let outcome: "learned" | "reinforced" | "nothing" = "learned";
  try {
    // Through the gate of lib/memory/writes.ts: pause, review, and "forget me" since the answer was given.
    const r = await modelChange(
      u,
      {
        op: "add",
        memory: {
          text:
            parsed.lesson.kind === "procedure"
              ? procedureText(parsed.lesson.text, parsed.lesson.steps)
              : parsed.lesson.text,
          kind: parsed.lesson.kind,
          steps: parsed.lesson.kind === "procedure" ? parsed.lesson.steps : undefined,
          source: "inferred",
          confidence: 0.6,
          sourceThreadId: fb.threadId,
          sourceItemId: fb.item.id,
          sourceFeedbackId: fb.id,
        },
      },
      {
        reason:
          fb.kind === "correction"
            ? "Learned from a correction"
            : `Learned from a ${fb.rating === 1 ? "👍" : "👎"} rating`,
        sourceThreadId: fb.threadId,
        sourceItemId: fb.item.id,
      },
    );
    if (r.outcome !== "applied") outcome = "nothing";
    // The lesson was already known: this signal confirms it.
    else if (r.memory.createdAt < started) {
      outcome = "reinforced";
      await reinforce(db, r.memory.id);
    }
  } catch (e) {
    if (!(e instanceof SecretRefusedError)) throw e;
  }
  await done();
  return outcome;
}

/** How much one more confirming signal raises a memory's confidence (at most to 1). */
const REINFORCE = 0.15;

/**
 * Raises a memory's confidence in the database itself: two signals handled at once both count, and a memory the user
 * deleted meanwhile is no error.
 */
async function reinforce(db: Db, id: string) {
  const raised = await db.memory.updateMany({
    where: { id, confidence: { lte: 1 - REINFORCE } },
    data: { confidence: { increment: REINFORCE } },
  });
  if (!raised.count) await db.memory.updateMany({ where: { id, confidence: { lt: 1 } }, data: { confidence: 1 } });
}

/**
 * The feedback says a memory the answer used is wrong: its text is corrected,
 * with a version. With the user's own words (a correction or a comment) it
 * counts as theirs, so it can correct what they said before; without, it is
 * a learned change and precedence applies (an explicit memory is not changed).
 */
async function correctMemory(
  u: UserContext,
  fb: { id: string; userId: string; threadId: string; item: { id: string } },
  fix: { id: string; text: string },
  said: string,
) {
  try {
    // Through the gate of lib/memory/writes.ts: pause and review apply; without the user's words a pinned or
    // user-written memory is only proposed.
    const r = await modelChange(
      u,
      { op: "update", id: fix.id, text: fix.text },
      {
        reason: "Corrected by your feedback on an answer that used it",
        userWords: !!said,
        sourceThreadId: fb.threadId,
        sourceItemId: fb.item.id,
      },
    );
    return r.outcome !== "refused";
  } catch (e) {
    if (e instanceof SecretRefusedError || e instanceof z.ZodError || e instanceof NotFoundError) return false;
    throw e;
  }
}

export type MemorySignals = { answers: number; up: number; down: number };

/** Per memory: how many answers used it, and how those answers were rated (the dashboard's "signals"). */
export async function signalsForMemories(
  db: Db,
  userId: string,
  memoryIds: string[],
): Promise<Map<string, MemorySignals>> {
  if (!memoryIds.length) return new Map();
  const rows = await db.$queryRaw<Array<{ memoryId: string } & MemorySignals>>`
    SELECT mu."memoryId", count(DISTINCT mu."itemId")::int AS answers,
            count(f.id) FILTER (WHERE f.rating = 1)::int AS up, count(f.id) FILTER (WHERE f.rating = -1)::int AS down
     FROM "MemoryUse" mu LEFT JOIN "Feedback" f ON f."itemId" = mu."itemId" AND f.kind = 'rating'
     WHERE mu."userId" = ${userId} AND mu."memoryId" = ANY(${memoryIds}::text[]) AND mu.used
     GROUP BY mu."memoryId"
  `;
  return new Map(rows.map(({ memoryId, ...s }) => [memoryId, s]));
}
