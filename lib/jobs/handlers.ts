// What each kind of job does. Payloads carry ids; handlers read the current
// rows (decrypted through the user's key) and do nothing when the rows are
// gone (deleted thread, deleted account) or the work is already done, so a
// job that runs twice after a crash does no harm.
import { documentsOfMessage } from "@/lib/attachments/store";
import { embedPassages } from "@/lib/attachments/vectors";
import { z } from "zod";
import { threadOwnerContext, userContext, type UserContext } from "@/lib/user-context";
import { projectScope } from "@/lib/projects/scope";
import { isLocalEndpoint } from "@/lib/memory/disclosure";
import type { Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { getConfig } from "@/lib/config";
import { resolveConnectionCached } from "@/lib/llm/connection";
import { loadContext } from "@/lib/chat/context";
import { refreshSummary } from "@/lib/chat/summaries";
import { generateTitle } from "@/lib/chat/titles";
import { extractMemories } from "@/lib/memory/extract";
import { evidenceForgotten } from "@/lib/memory/writes";
import { expireUnusedMemories } from "@/lib/memory/writes";
import { embedPending, queueEmbedding } from "@/lib/memory/embed";
import { embeddingsOn } from "@/lib/llm/embeddings";
import { learnFromFeedback } from "@/lib/memory/feedback";
import { learnFromImports } from "@/lib/import/learn";
import { consolidateSoon, consolidateUser } from "@/lib/memory/consolidate";
import { refreshAbout } from "@/lib/memory/about";
import type { JobKind } from "./queue";

const id = z.string().min(1).max(64);
const payloads = {
  title: z.object({ threadId: id, userItemId: id, answerItemId: id }),
  // budget: the history budget the turn used (smaller when the model server reads less: lib/llm/prompt-limits.ts).
  summary: z.object({ threadId: id, leafId: id, budget: z.number().int().min(0).max(10_000_000).optional() }),
  extract: z.object({ userId: id, threadId: id, userItemId: id, answerItemId: id }),
  embed: z.object({ userId: id }),
  // version: the row's updatedAt when queued (absent in jobs queued before it existed).
  feedback: z.object({ feedbackId: id, version: z.string().max(40).optional() }),
  "import-learn": z.object({ userId: id }),
  consolidate: z.object({ userId: id }),
  about: z.object({ userId: id }),
  "attachment-vectors": z.object({ attachmentId: id }),
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
async function exchange(u: UserContext, threadId: string, userItemId: string, answerItemId: string) {
  const ids = [userItemId, answerItemId];
  const [rows, texts] = await Promise.all([
    u.db.item.findMany({ where: { threadId, id: { in: ids } }, select: { id: true, status: true, createdAt: true } }),
    u.db.$queryRaw<Array<{ id: string; content: string }>>`
      SELECT id, ${readPart(Prisma.sql`content`)} AS content FROM "Item" WHERE "threadId" = ${threadId} AND id IN (${Prisma.join(ids)})
    `,
  ]);
  const q = rows.find((r) => r.id === userItemId);
  const a = rows.find((r) => r.id === answerItemId);
  const text = (id: string) => u.cipher.open(texts.find((t) => t.id === id)?.content ?? "");
  if (!q || !a || a.status !== "complete") return null;
  return { question: text(q.id), answer: text(a.id), at: q.createdAt };
}

/** Past this size (in bytes, read without opening the value), a message is read by its start and its end. */
const LONG_MESSAGE_BYTES = 400_000;
/**
 * Of a long message, what learning and titles read: its start and end, far more than the model is shown of it
 * (lib/memory/extract.ts). Reading a 7 MB message whole held the embedded database and the server for 0.2 s. A sealed
 * message (encryption at rest) opens only whole.
 */
const readPart = (content: Prisma.Sql) => Prisma.sql`CASE
  WHEN octet_length(${content}) <= ${LONG_MESSAGE_BYTES} OR left(${content}, 5) = 'enc1:' THEN ${content}
  ELSE left(${content}, 60000) || E'\n…\n' || right(${content}, 40000) END`;

/** Each job makes its user's context (lib/user-context.ts) once, from the ids its payload carries. */
export async function runJob(db: Db, kind: string, payload: unknown): Promise<void> {
  switch (kind as JobKind) {
    case "title": {
      const p = payloadOf("title", payload);
      const u = await threadOwnerContext(db, p.threadId);
      const ex = u && (await exchange(u, p.threadId, p.userItemId, p.answerItemId));
      if (u && ex) await generateTitle(u, await connection(db), p.threadId, ex.question, ex.answer);
      return;
    }
    case "summary": {
      const p = payloadOf("summary", payload);
      const exists = await db.item.findFirst({ where: { id: p.leafId, threadId: p.threadId }, select: { id: true } });
      const u = exists && (await threadOwnerContext(db, p.threadId));
      if (!u) return;
      const ctx = await loadContext(db, p.threadId, p.leafId, { pastWindow: true, cipher: u.cipher, budget: p.budget });
      if (ctx.unsummarized.length)
        await refreshSummary(u, await connection(db), p.threadId, ctx.summary, ctx.unsummarized);
      return;
    }
    case "extract": {
      const p = payloadOf("extract", payload);
      // Settings are read now, not when the answer was written: pausing learning stops queued work too.
      const thread = await db.thread.findFirst({
        where: { id: p.threadId, userId: p.userId },
        select: {
          temporary: true,
          private: true,
          authorId: true,
          project: { select: { id: true, memoryMode: true, shared: true } },
        },
      });
      // A member's private chat in a shared project teaches the project nothing.
      if (!thread || thread.temporary || thread.private) return;
      // Learned in a project: it belongs to the project, and only the project's memories are candidates to change.
      const conn = await connection(db);
      // Private memories are shown to the memory model only when it runs on this machine (lib/memory/disclosure.ts).
      const scope = { ...projectScope(thread.project), privateOk: isLocalEndpoint(conn.baseURL) };
      // In a shared project the chat's author teaches: a memory names them, and another member saying it confirms it.
      const u = await userContext(db, p.userId, scope, thread.authorId ?? p.userId);
      const settings = await u.settings();
      if (settings.paused) return;
      const ex = await exchange(u, p.threadId, p.userItemId, p.answerItemId);
      // Nor what the user has since asked Mnemo to forget: it is not even sent to the memory model.
      if (!ex || (await evidenceForgotten(db, p.userId, { sourceItemId: p.userItemId }))) return;
      const exchangeIds = { threadId: p.threadId, userItemId: p.userItemId };
      const documents = await documentsOfMessage(u, p.userItemId);
      await extractMemories(u, conn, { ...exchangeIds, ...ex, documents, review: settings.review });
      await expireUnusedMemories(db, p.userId, getConfig().memory.expireUnusedDays);
      await consolidateSoon(db, p.userId);
      // What was just learned gets its vector next (with no embedding model, recall is lexical and there is nothing to
      // do).
      if (embeddingsOn(conn)) await queueEmbedding(db, p.userId, `embed:extract:${p.answerItemId}`);
      return;
    }
    case "embed": {
      const p = payloadOf("embed", payload);
      // A bounded slice per job, so one user's backlog never holds the worker; the rest is queued again.
      const r = await embedPending(db, { userId: p.userId, max: EMBED_PER_JOB });
      if (r.remaining > 0) await queueEmbedding(db, p.userId);
      return;
    }
    case "attachment-vectors": {
      // A deleted file (or thread, or account) leaves nothing to do.
      await embedPassages(db, payloadOf("attachment-vectors", payload).attachmentId);
      return;
    }
    case "feedback": {
      const p = payloadOf("feedback", payload);
      const fb = await db.feedback.findUnique({
        where: { id: p.feedbackId },
        select: { userId: true, item: { select: { thread: { select: { project: true, authorId: true } } } } },
      });
      if (!fb) return; // removed since
      const conn = await connection(db);
      // A lesson from a project's answer belongs to the project; in a shared one its author (who rated) acts.
      const { project, authorId } = fb.item.thread;
      const u = await userContext(db, fb.userId, projectScope(project), authorId ?? fb.userId);
      const learned = (await learnFromFeedback(u, conn, p.feedbackId, p.version)) !== "nothing";
      if (learned && embeddingsOn(conn)) {
        await queueEmbedding(db, fb.userId, `embed:feedback:${p.feedbackId}:${Date.now()}`);
      }
      return;
    }
    case "consolidate": {
      const p = payloadOf("consolidate", payload);
      const state = await resolveConnectionCached(db);
      const u = await userContext(db, p.userId);
      await consolidateUser(u, state.configured ? state.connection : null);
      // Then "What Mnemo knows about you", from the memories as consolidation left them.
      if (state.configured) await refreshAbout(u, state.connection);
      return;
    }
    case "about": {
      // "What Mnemo knows about you" again, after the user took something out of it (lib/memory/about.ts).
      const p = payloadOf("about", payload);
      const state = await resolveConnectionCached(db);
      if (state.configured) await refreshAbout(await userContext(db, p.userId), state.connection);
      return;
    }
    case "import-learn": {
      const p = payloadOf("import-learn", payload);
      await learnFromImports(await userContext(db, p.userId), await connection(db));
      return;
    }
    default:
      throw new PermanentJobError(`Unknown job kind ${kind}`);
  }
}
