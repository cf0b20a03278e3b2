// What each kind of job does. Payloads carry ids; handlers read the current
// rows (decrypted through the user's key) and do nothing when the rows are
// gone (deleted thread, deleted account) or the work is already done, so a
// job that runs twice after a crash does no harm.
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { cipherForThread } from "@/lib/crypto/content";
import { resolveConnectionCached } from "@/lib/llm/connection";
import { loadContext } from "@/lib/chat/context";
import { refreshSummary } from "@/lib/chat/summaries";
import { generateTitle } from "@/lib/chat/titles";
import { extractMemories } from "@/lib/memory/extract";
import { expireUnusedMemories } from "@/lib/memory/long-term";
import { embedPending, queueEmbedding } from "@/lib/memory/embed";
import { learnFromFeedback } from "@/lib/memory/feedback";
import { learnFromImports } from "@/lib/import/learn";
import { consolidateSoon, consolidateUser } from "@/lib/memory/consolidate";
import type { JobKind } from "./queue";

const id = z.string().min(1).max(64);
const payloads = {
  title: z.object({ threadId: id, userItemId: id, answerItemId: id }),
  summary: z.object({ threadId: id, leafId: id }),
  extract: z.object({ userId: id, threadId: id, userItemId: id, answerItemId: id }),
  embed: z.object({ userId: id }),
  // version: the row's updatedAt when queued (absent in jobs queued before it existed).
  feedback: z.object({ feedbackId: id, version: z.string().max(40).optional() }),
  "import-learn": z.object({ userId: id }),
  consolidate: z.object({ userId: id }),
} satisfies Record<JobKind, z.ZodType>;

const EMBED_PER_JOB = 512;

/** A job that cannot succeed by retrying (bad payload, no model configured). */
export class PermanentJobError extends Error {}

/** The payload of a job of `kind`; a payload that does not fit will never fit, so it fails at once. */
function payloadOf<K extends JobKind>(kind: K, payload: unknown): z.infer<(typeof payloads)[K]> {
  const r = payloads[kind].safeParse(payload);
  if (!r.success) throw new PermanentJobError(`Malformed ${kind} payload: ${r.error.issues[0]?.message ?? "invalid"}`);
  return r.data as z.infer<(typeof payloads)[K]>;
}

async function connection(db: Db) {
  const state = await resolveConnectionCached(db);
  if (!state.configured) throw new PermanentJobError(state.reason);
  return state.connection;
}

/** The two messages of an exchange, as the user wrote them; null if either is gone or unfinished. */
async function exchange(db: Db, threadId: string, userItemId: string, answerItemId: string) {
  const rows = await db.item.findMany({
    where: { threadId, id: { in: [userItemId, answerItemId] } },
    select: { id: true, content: true, status: true },
  });
  const q = rows.find((r) => r.id === userItemId);
  const a = rows.find((r) => r.id === answerItemId);
  if (!q || !a || a.status !== "complete") return null;
  const c = await cipherForThread(db, threadId);
  return { question: c.open(q.content), answer: c.open(a.content) };
}

export async function runJob(db: Db, kind: string, payload: unknown): Promise<void> {
  switch (kind as JobKind) {
    case "title": {
      const p = payloadOf("title", payload);
      const ex = await exchange(db, p.threadId, p.userItemId, p.answerItemId);
      if (ex) await generateTitle(db, await connection(db), p.threadId, ex.question, ex.answer);
      return;
    }
    case "summary": {
      const p = payloadOf("summary", payload);
      const exists = await db.item.findFirst({ where: { id: p.leafId, threadId: p.threadId }, select: { id: true } });
      if (!exists) return;
      const ctx = await loadContext(db, p.threadId, p.leafId, { pastWindow: true });
      if (ctx.unsummarized.length)
        await refreshSummary(db, await connection(db), p.threadId, ctx.summary, ctx.unsummarized);
      return;
    }
    case "extract": {
      const p = payloadOf("extract", payload);
      // Settings are read now, not when the answer was written: pausing learning stops queued work too.
      const [user, thread] = await Promise.all([
        db.user.findUnique({ where: { id: p.userId }, select: { memoryPaused: true, memoryReview: true } }),
        db.thread.findFirst({ where: { id: p.threadId, userId: p.userId }, select: { temporary: true } }),
      ]);
      if (!user || !thread || thread.temporary || user.memoryPaused) return;
      const ex = await exchange(db, p.threadId, p.userItemId, p.answerItemId);
      if (!ex) return;
      const conn = await connection(db);
      const exchangeIds = { userId: p.userId, threadId: p.threadId, userItemId: p.userItemId };
      await extractMemories(db, conn, { ...exchangeIds, ...ex, review: user.memoryReview });
      await expireUnusedMemories(db, p.userId, getConfig().memory.expireUnusedDays);
      await consolidateSoon(db, p.userId);
      // What was just learned gets its vector next (with no embedding model, recall is lexical and there is nothing to
      // do).
      if (conn.embeddingModel) await queueEmbedding(db, p.userId, `embed:extract:${p.answerItemId}`);
      return;
    }
    case "embed": {
      const p = payloadOf("embed", payload);
      // A bounded slice per job, so one user's backlog never holds the worker; the rest is queued again.
      const r = await embedPending(db, { userId: p.userId, max: EMBED_PER_JOB });
      if (r.remaining > 0) await queueEmbedding(db, p.userId);
      return;
    }
    case "feedback": {
      const p = payloadOf("feedback", payload);
      const fb = await db.feedback.findUnique({ where: { id: p.feedbackId }, select: { userId: true } });
      if (!fb) return; // removed since
      const conn = await connection(db);
      const learned = (await learnFromFeedback(db, conn, p.feedbackId, p.version)) !== "nothing";
      if (learned && conn.embeddingModel) {
        await queueEmbedding(db, fb.userId, `embed:feedback:${p.feedbackId}:${Date.now()}`);
      }
      return;
    }
    case "consolidate": {
      const p = payloadOf("consolidate", payload);
      const state = await resolveConnectionCached(db);
      await consolidateUser(db, p.userId, state.configured ? state.connection : null);
      return;
    }
    case "import-learn": {
      const p = payloadOf("import-learn", payload);
      await learnFromImports(db, await connection(db), p.userId);
      return;
    }
    default:
      throw new PermanentJobError(`Unknown job kind ${kind}`);
  }
}
