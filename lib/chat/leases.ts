// Answer leases: the instance writing an answer renews its lease while it
// streams; an answer whose lease ran out (the process was killed, lost its
// database, or hung) is marked "interrupted" by the sweeper, keeping the text
// saved so far, and the UI offers Retry. The sweep is one UPDATE, so any
// number of instances can run it at once.
import type { Db } from "@/lib/db/client";

export const LEASE_SECONDS = 30;
/** Renewed this often while an answer streams (several renewals per lease). */
export const RENEW_MS = 10_000;

export const INTERRUPTED_MESSAGE = "This answer was interrupted before it finished. Retry to get a complete answer.";

/**
 * Extends the lease of an answer that is still streaming; false when it is no longer streaming (stopped, swept, gone).
 */
export async function renewLease(db: Db, itemId: string): Promise<boolean> {
  const n = await db.$executeRawUnsafe(
    `UPDATE "Item" SET "leaseExpiresAt" = timezone('UTC', now()) + make_interval(secs => $2)
     WHERE id = $1 AND status = 'streaming'`,
    itemId,
    LEASE_SECONDS,
  );
  return n > 0;
}

/**
 * Marks streaming answers whose lease expired as interrupted. An answer that
 * never got a lease (its instance died before the first renewal) counts from
 * its last update.
 */
export async function sweepExpiredAnswers(db: Db, threadId?: string): Promise<number> {
  return db.$executeRawUnsafe(
    `UPDATE "Item" SET status = 'interrupted', error = $1, "leaseExpiresAt" = NULL, "updatedAt" = timezone('UTC', now())
     WHERE status = 'streaming' AND ($3::text IS NULL OR "threadId" = $3)
       AND COALESCE("leaseExpiresAt", "updatedAt" + make_interval(secs => $2)) < timezone('UTC', now())`,
    INTERRUPTED_MESSAGE,
    LEASE_SECONDS,
    threadId ?? null,
  );
}
