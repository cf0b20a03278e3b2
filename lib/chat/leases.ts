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
  const n = await db.$executeRaw`
    UPDATE "Item" SET "leaseExpiresAt" = timezone('UTC', now()) + make_interval(secs => ${LEASE_SECONDS})
     WHERE id = ${itemId} AND status = 'streaming'
  `;
  return n > 0;
}

/**
 * Marks streaming answers whose lease expired as interrupted. An answer that
 * never got a lease (its instance died before the first renewal) counts from
 * its last update.
 */
export async function sweepExpiredAnswers(db: Db, threadId?: string): Promise<number> {
  return db.$executeRaw`
    UPDATE "Item" SET status = 'interrupted', error = ${INTERRUPTED_MESSAGE}, "leaseExpiresAt" = NULL, "updatedAt" = timezone('UTC', now())
     WHERE status = 'streaming' AND (${threadId ?? null}::text IS NULL OR "threadId" = ${threadId ?? null})
       AND COALESCE("leaseExpiresAt", "updatedAt" + make_interval(secs => ${LEASE_SECONDS})) < timezone('UTC', now())
  `;
}
