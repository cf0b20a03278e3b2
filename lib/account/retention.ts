// Retention: messages older than MNEMO_MESSAGE_RETENTION_DAYS and temporary
// chats older than MNEMO_TEMPORARY_CHAT_HOURS. Reads hide what has expired at
// once (retentionCutoff); `npm run jobs:retention` then deletes it for good.
// Every function takes `now`, so tests control the clock.
import { pruneJobs } from "@/lib/jobs/queue";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { expireUnusedMemories } from "@/lib/memory/writes";

export type RetentionSettings = { messageDays: number; temporaryChatHours: number };

let override: RetentionSettings | undefined;
/** Tests: use these settings instead of the configuration. */
export function setRetentionForTests(s: RetentionSettings | undefined) {
  override = s;
}
export const retentionSettings = (): RetentionSettings => override ?? getConfig().retention;

/** Messages created before this instant are expired (the epoch when retention is off). */
export function retentionCutoff(now = new Date(), s = retentionSettings()): Date {
  return s.messageDays > 0 ? new Date(now.getTime() - s.messageDays * 86_400_000) : new Date(0);
}

export function temporaryCutoff(now = new Date(), s = retentionSettings()): Date {
  return new Date(now.getTime() - s.temporaryChatHours * 3_600_000);
}

export type RetentionCounts = {
  messages: number;
  summaries: number;
  threads: number;
  temporaryChats: number;
  memoriesExpired: number;
  signedOutSessions: number;
  jobsPruned: number;
};

/** Finished background jobs are kept this long (for the admin page), then deleted. */
const DONE_JOBS_DAYS = 7;

/** Deletes what has expired; returns how many rows of each kind went. */
export async function runRetention(
  db: Db,
  now = new Date(),
  s = retentionSettings(),
  memoryExpireDays = 0,
): Promise<RetentionCounts> {
  const counts: RetentionCounts = {
    messages: 0,
    summaries: 0,
    threads: 0,
    temporaryChats: 0,
    memoriesExpired: 0,
    signedOutSessions: 0,
    jobsPruned: 0,
  };
  counts.jobsPruned = await pruneJobs(db, new Date(now.getTime() - DONE_JOBS_DAYS * 86_400_000));
  // Signed-out session ids whose tokens have expired anyway.
  counts.signedOutSessions = (await db.signedOutSession.deleteMany({ where: { expiresAt: { lt: now } } })).count;
  counts.temporaryChats = (
    await db.thread.deleteMany({ where: { temporary: true, createdAt: { lt: temporaryCutoff(now, s) } } })
  ).count;
  // Unused memories (MNEMO_MEMORY_EXPIRE_DAYS) are archived here too, not only after a user's next answer.
  if (memoryExpireDays > 0) {
    const users = await db.memory.findMany({
      where: { status: "active", pinned: false },
      distinct: ["userId"],
      select: { userId: true },
    });
    for (const u of users) counts.memoriesExpired += await expireUnusedMemories(db, u.userId, memoryExpireDays, now);
  }
  if (s.messageDays <= 0) return counts;
  const cutoff = retentionCutoff(now, s);
  await db.$transaction(async (tx) => {
    // Summaries through an expired message summarise only expired messages.
    counts.summaries = await tx.$executeRaw`
      DELETE FROM "Summary" s USING "Item" i WHERE i.id = s."throughItemId" AND i."createdAt" < ${cutoff}
    `;
    // Expired messages are the oldest part of each branch: detach the newer
    // messages from them first (a parent's delete would cascade down the branch).
    await tx.$executeRaw`
      UPDATE "Item" c SET "parentId" = NULL FROM "Item" p
       WHERE c."parentId" = p.id AND p."createdAt" < ${cutoff} AND c."createdAt" >= ${cutoff}
    `;
    await tx.$executeRaw`
      UPDATE "Thread" t SET "activeLeafId" = NULL FROM "Item" i WHERE i.id = t."activeLeafId" AND i."createdAt" < ${cutoff}
    `;
    await tx.$executeRaw`
      UPDATE "Item" SET "parentId" = NULL WHERE "createdAt" < ${cutoff} AND "parentId" IS NOT NULL
    `;
    counts.messages = await tx.$executeRaw`DELETE FROM "Item" WHERE "createdAt" < ${cutoff}`;
    // Threads left without any message, and inactive since the cutoff, go too.
    counts.threads = await tx.$executeRaw`
      DELETE FROM "Thread" t WHERE t."lastActivityAt" < ${cutoff} AND NOT EXISTS (SELECT 1 FROM "Item" i WHERE i."threadId" = t.id)
    `;
  });
  return counts;
}
