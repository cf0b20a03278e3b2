// Learning from imported history, when the user asks for it: the memory model
// reads each exchange (a user message and the answer to it) of the imported
// conversations, as the automatic learning does after a live answer
// (lib/memory/extract.ts), and what it proposes waits in the review queue
// with the imported message as its provenance.
// - Rate-limited: one job does at most MNEMO_IMPORT_LEARN_PER_MINUTE model
//   calls, then queues the next job a minute later.
// - Resumable: each thread records the position of the last user message read,
//   claimed before the call, so a crash or a second worker never reads one
//   twice and a restart goes on where it stopped.
// - Pausing learning stops it; asking again resumes.
import type { Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import { projectScope, type MemoryScope } from "@/lib/projects/scope";
import { getConfig } from "@/lib/config";
import type { ModelConnection } from "@/lib/llm/connection";
import { extractMemories } from "@/lib/memory/extract";
import { UsageLimitSkip } from "@/lib/llm/metered";
import { enqueue } from "@/lib/jobs/queue";
import { queueEmbedding } from "@/lib/memory/embed";
import { queueImportedFeedback } from "./feedback";

export type LearnPlan = {
  /** Imported conversations (all of them, learned or not). */
  threads: number;
  /** Exchanges read so far, and left to read (one memory-model call each). */
  done: number;
  remaining: number;
  /** Whether a learning run is under way. */
  running: boolean;
  paused: boolean;
  perMinute: number;
};

// An exchange: a user message and the first finished answer below it (past tool notes and tool calls).
const ANSWER = Prisma.sql`
  JOIN LATERAL (
    WITH RECURSIVE d AS (
      SELECT c.id, c.role, c.status, c.content, c.position, 1 AS depth FROM "Item" c WHERE c."parentId" = u.id
      UNION ALL
      SELECT c.id, c.role, c.status, c.content, c.position, d.depth + 1 FROM "Item" c JOIN d ON c."parentId" = d.id
      WHERE d.role <> 'user' AND d.depth < 4
    )
    SELECT d.content FROM d WHERE d.role = 'assistant' AND d.status = 'complete' ORDER BY d.depth, d.position LIMIT 1
  ) a ON true`;

export async function learnPlan(db: Db, userId: string): Promise<LearnPlan> {
  const [[row], user] = await Promise.all([
    // Counted cheaply (the data page polls it): a user message whose direct reply is a finished answer
    // or a tool note. The job itself looks past tool notes for the answer.
    db.$queryRaw<Array<{ threads: number; done: number; remaining: number; running: number }>>`
      SELECT count(DISTINCT t.id)::int AS threads,
              count(u.id) FILTER (WHERE u.position <= COALESCE(t."importLearnedThrough", -1))::int AS done,
              count(u.id) FILTER (WHERE u.position > COALESCE(t."importLearnedThrough", -1))::int AS remaining,
              count(DISTINCT t.id) FILTER (WHERE t."importLearn" = 'queued')::int AS running
       FROM "Thread" t
       LEFT JOIN "Item" u ON u."threadId" = t.id AND u.role = 'user'
         AND EXISTS (SELECT 1 FROM "Item" a WHERE a."parentId" = u.id AND (a.role = 'tool' OR (a.role = 'assistant' AND a.status = 'complete')))
       WHERE t."userId" = ${userId} AND t."importSource" IS NOT NULL
    `,
    db.user.findUnique({ where: { id: userId }, select: { memoryPaused: true } }),
  ]);
  return {
    threads: row?.threads ?? 0,
    done: row?.done ?? 0,
    remaining: row?.remaining ?? 0,
    running: (row?.running ?? 0) > 0,
    paused: !!user?.memoryPaused,
    perMinute: getConfig().import.learnPerMinute,
  };
}

/** Marks every imported conversation with something left to read as queued, and queues the first job. */
export async function startLearning(db: Db, userId: string): Promise<number> {
  const n = await db.thread.updateMany({
    where: { userId, importSource: { not: null }, OR: [{ importLearn: null }, { importLearn: "done" }] },
    data: { importLearn: "queued" },
  });
  // A double click adds no second job while one waits (two would only share the work, over the rate limit). One
  // that is running may already have looked for the last time, so a start beside it queues another; and a start
  // after the last run finished does too (a key by the clock alone matched the finished job for ten seconds).
  const waiting = await db.job.count({ where: { userId, kind: "import-learn", status: "queued" } });
  if (!waiting)
    await enqueue(db, [
      { kind: "import-learn", userId, payload: { userId }, dedupeKey: `import-learn:${userId}:start:${Date.now()}` },
    ]);
  // The ratings that came with the imports (a 👎, words with a rating) teach too, as if given here.
  await queueImportedFeedback(db, userId, getConfig().import.learnPerMinute);
  return n.count;
}

const minute = (ms: number) => Math.floor(ms / 60_000);

type Exchange = {
  threadId: string;
  userItemId: string;
  position: number;
  question: string;
  answer: string;
  /** When the user wrote it (relative dates in it count from then). */
  at: Date;
  learned: number | null;
  /** The conversation's project scope: what it teaches belongs there. */
  scope: MemoryScope;
};

/**
 * The next exchange to read, claimed (the thread's mark moves past it) so no
 * one reads it again. One queued conversation at a time, oldest first, and in
 * it the first answered question past the mark: the cost of a claim does not
 * grow with the size of the import (reading every queued conversation's
 * questions and their answers to pick the first took 170 ms on PGlite at 300
 * conversations). A conversation with nothing left is marked done.
 */
async function claimNext(db: Db, userId: string): Promise<Exchange | null> {
  for (;;) {
    const thread = await db.thread.findFirst({
      where: { userId, importLearn: "queued" },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: {
        id: true,
        importLearnedThrough: true,
        recallFrom: true,
        project: { select: { id: true, memoryMode: true, shared: true } },
      },
    });
    if (!thread) return null;
    const learned = thread.importLearnedThrough;
    const [next] = await db.$queryRaw<Array<Omit<Exchange, "learned" | "scope">>>`
      SELECT u."threadId", u.id AS "userItemId", u.position, u.content AS question, a.content AS answer,
        u."createdAt" AS at
      FROM "Item" u ${ANSWER}
      WHERE u."threadId" = ${thread.id} AND u.role = 'user' AND u.position > COALESCE(${learned}::int, -1)
        -- Not what "forget me" covered (lib/memory/long-term.ts).
        AND u."createdAt" >= COALESCE(${thread.recallFrom}::timestamp, '-infinity'::timestamp)
      ORDER BY u.position LIMIT 1
    `;
    // The mark must not have moved since it was read: another worker may be claiming in this thread.
    const unmoved = Prisma.sql`id = ${thread.id} AND "importLearn" = 'queued'
      AND COALESCE("importLearnedThrough", -1) = COALESCE(${learned}::int, -1)`;
    if (!next) {
      await db.$executeRaw`UPDATE "Thread" SET "importLearn" = 'done' WHERE ${unmoved}`;
      continue;
    }
    const claimed =
      await db.$executeRaw`UPDATE "Thread" SET "importLearnedThrough" = ${next.position} WHERE ${unmoved}`;
    if (claimed) return { ...next, learned, scope: projectScope(thread.project) };
    // Another worker moved the mark first: look again.
  }
}

/**
 * One job's share: up to the per-minute limit of exchanges, then the next job
 * a minute later. Returns what it read and whether anything is left.
 */
export async function learnFromImports(
  u: UserContext,
  conn: ModelConnection,
  opts: { perRun?: number } = {},
): Promise<{ read: number; left: boolean }> {
  const { db, userId } = u;
  if ((await u.settings()).paused) return { read: 0, left: false };
  const c = u.cipher;
  const limit = opts.perRun ?? getConfig().import.learnPerMinute;
  const started = Date.now();
  let read = 0;
  for (; read < limit; read++) {
    // None left (claimNext marks each conversation done as it runs out; marking the rest done here too would catch
    // those a new start queued meanwhile).
    const ex = await claimNext(db, userId);
    if (!ex) break;
    try {
      // What a project's conversation teaches belongs to the project (lib/projects/scope.ts).
      await extractMemories(inMemoryScope(u, ex.scope), conn, {
        threadId: ex.threadId,
        userItemId: ex.userItemId,
        question: c.open(ex.question),
        answer: c.open(ex.answer),
        at: ex.at,
        review: true, // history from elsewhere is never learned without the user's say
      });
    } catch (e) {
      // The model failed: give the exchange back, so the job's retry reads it.
      await db.$executeRaw`
        UPDATE "Thread" SET "importLearnedThrough" = ${ex.learned}::int WHERE id = ${ex.threadId} AND "importLearnedThrough" = ${ex.position}
      `;
      if (!(e instanceof UsageLimitSkip)) throw e;
      // Today's allowance is used up: go on after midnight UTC.
      const tomorrow = new Date(
        Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1, 0, 1),
      );
      await enqueue(db, [
        {
          kind: "import-learn",
          userId,
          payload: { userId },
          runAt: tomorrow,
          dedupeKey: `import-learn:${userId}:${minute(tomorrow.getTime())}`,
        },
      ]);
      return { read, left: true };
    }
  }
  if (read) await queueEmbedding(db, userId, `embed:import-learn:${userId}:${started}`);
  const left = read === limit;
  if (left) {
    const next = started + 60_000;
    await enqueue(db, [
      {
        kind: "import-learn",
        userId,
        payload: { userId },
        runAt: new Date(next),
        dedupeKey: `import-learn:${userId}:${minute(next)}`,
      },
    ]);
  }
  return { read, left };
}
