// The durable job queue: one table (Job), the same on PostgreSQL and PGlite.
// Enqueue writes a row; any instance claims due rows with FOR UPDATE SKIP
// LOCKED (so several instances never run one job twice at once), runs the
// handler and marks it done, or schedules a retry with exponential backoff.
// A claimed job whose instance died is claimed again once its lock expires.
// Handlers must be idempotent: a job can run again after a crash mid-way.
//
// Why not pg-boss or graphile-worker: both need their own pg connection pool
// and PostgreSQL-only features (LISTEN/NOTIFY, their own schema migrations);
// the embedded database has one in-process connection. This queue runs through
// the app's one database layer on both engines, with the same semantics.
import { randomUUID } from "node:crypto";
import os from "node:os";
import type { Db } from "@/lib/db/client";
import { Prisma, type Job } from "@/lib/generated/prisma/client";

export type JobKind =
  | "title"
  | "summary"
  | "extract"
  | "embed"
  | "feedback"
  | "import-learn"
  | "consolidate"
  | "about"
  | "attachment-vectors";
export type NewJob = {
  kind: JobKind;
  userId?: string | null;
  payload: Record<string, unknown>;
  dedupeKey?: string;
  runAt?: Date;
  maxAttempts?: number;
};

export const WORKER_ID = `${os.hostname()}:${process.pid}`;
/**
 * How long a claim lasts without renewal. A running job renews it every
 * HEARTBEAT_SECONDS, so a long job keeps its lock while a killed instance's
 * job is claimed again within LOCK_SECONDS, not after a fixed long wait.
 */
export const LOCK_SECONDS = 30;
export const HEARTBEAT_SECONDS = 10;

type Waker = () => void;
// On globalThis: Next.js bundles instrumentation (where the worker starts) and
// route handlers (where jobs are enqueued) as separate module instances.
const g = globalThis as typeof globalThis & { __mnemoJobWakers?: Set<Waker> };
const wakers = (g.__mnemoJobWakers ??= new Set<Waker>());
/** In-process hint that a job was enqueued, so a worker here starts at once instead of at its next poll. */
export function onEnqueue(w: Waker): () => void {
  wakers.add(w);
  return () => wakers.delete(w);
}

/** The columns hold UTC without a zone. */
const UTC_NOW = Prisma.sql`timezone('UTC', now())`;

/**
 * Enqueues jobs; a dedupe key already queued or done adds nothing. One plain
 * statement (no transaction around it): a turn enqueues on its hot path.
 * `runAt` is kept relative to the database clock, the one `claim` compares with.
 */
export async function enqueue(db: Db, jobs: NewJob[]): Promise<void> {
  if (!jobs.length) return;
  const rows = jobs.map((j) => {
    const delaySeconds = j.runAt ? Math.max(0, (j.runAt.getTime() - Date.now()) / 1000) : 0;
    return Prisma.sql`(${randomUUID()}, ${j.kind}, ${j.userId ?? null}::text, ${JSON.stringify(j.payload)}::jsonb,
      ${j.dedupeKey ?? null}::text, ${j.maxAttempts ?? 5}::int, ${UTC_NOW} + make_interval(secs => ${delaySeconds}::float8),
      ${UTC_NOW}, ${UTC_NOW})`;
  });
  await db.$executeRaw`
    INSERT INTO "Job" (id, kind, "userId", payload, "dedupeKey", "maxAttempts", "runAt", "createdAt", "updatedAt")
    VALUES ${Prisma.join(rows)}
    ON CONFLICT ("dedupeKey") DO NOTHING
  `;
  for (const w of wakers) w();
}

/**
 * Claims up to `limit` due jobs for this worker, in one statement. The due rows are picked in a materialized CTE,
 * evaluated once: as `id IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)` a plan may rescan the subquery, each rescan
 * skipping the rows the last one locked, and claim several times `limit` rows, the extra ones left "running" with no
 * worker until their lock lapsed (seen under load on PGlite's kept statements: 137 of 1,300 claims of one took 2–3).
 */
export async function claim(db: Db, limit: number, kinds?: JobKind[]): Promise<Job[]> {
  const rows = await db.$queryRaw<Job[]>`
    WITH due AS MATERIALIZED (
      SELECT id FROM "Job"
       WHERE ((status = 'queued' AND "runAt" <= timezone('UTC', now()))
              OR (status = 'running' AND "lockedUntil" < timezone('UTC', now())))
         AND (${kinds ?? null}::text[] IS NULL OR kind = ANY(${kinds ?? null}::text[]))
       ORDER BY "runAt" LIMIT ${limit}
       FOR UPDATE SKIP LOCKED
    )
    UPDATE "Job" j SET status = 'running', attempts = j.attempts + 1, "lockedBy" = ${WORKER_ID},
            "lockedUntil" = timezone('UTC', now()) + make_interval(secs => ${LOCK_SECONDS}), "updatedAt" = timezone('UTC', now())
      FROM due WHERE j.id = due.id
    RETURNING j.id, j.kind, j."userId", j.payload, j."dedupeKey", j.status::text AS status, j.attempts, j."maxAttempts",
              j."runAt", j."lockedUntil", j."lockedBy", j."lastError", j."createdAt", j."updatedAt", j."finishedAt"
  `;
  return rows.sort((a, b) => a.runAt.getTime() - b.runAt.getTime());
}

/** Renews this worker's claim on a running job; false once the claim was lost to another worker. */
export async function renewLock(db: Db, job: Job): Promise<boolean> {
  const n = await db.$executeRaw`
    UPDATE "Job" SET "lockedUntil" = timezone('UTC', now()) + make_interval(secs => ${LOCK_SECONDS})
     WHERE id = ${job.id} AND "lockedBy" = ${WORKER_ID} AND status = 'running'
  `;
  return n > 0;
}

export async function complete(db: Db, job: Job): Promise<void> {
  await db.$executeRaw`
    UPDATE "Job" SET status = 'done', "finishedAt" = timezone('UTC', now()), "lockedUntil" = NULL, "lastError" = NULL,
            "updatedAt" = timezone('UTC', now())
     WHERE id = ${job.id} AND "lockedBy" = ${WORKER_ID} AND status = 'running'
  `;
}

/** Backoff before attempt n+1: 5 s, 20 s, 80 s, … at most an hour. */
export const backoffSeconds = (attempts: number) => Math.min(3600, 5 * 4 ** Math.max(0, attempts - 1));

export async function fail(db: Db, job: Job, error: string): Promise<"retry" | "failed"> {
  const final = job.attempts >= job.maxAttempts;
  const status = final ? "failed" : "queued";
  await db.$executeRaw`
    UPDATE "Job" SET status = ${status}::text::"JobStatus", "lastError" = ${error.slice(0, 1000)}, "lockedUntil" = NULL,
           "runAt" = timezone('UTC', now()) + make_interval(secs => ${backoffSeconds(job.attempts)}),
           "finishedAt" = CASE WHEN ${status}::text = 'failed' THEN timezone('UTC', now()) END,
           "updatedAt" = timezone('UTC', now())
    WHERE id = ${job.id} AND "lockedBy" = ${WORKER_ID} AND status = 'running'
  `;
  return final ? "failed" : "retry";
}

/**
 * Counts by status, how long the oldest due job has waited (the backlog's lag:
 * under a burst, answers come first and learning catches up after), and the
 * newest failures. For the admin page; no payload contents.
 */
export async function queueHealth(db: Db) {
  const [counts, lag, failures] = await Promise.all([
    db.job.groupBy({ by: ["kind", "status"], _count: { _all: true } }),
    db.$queryRaw<Array<{ seconds: number | null }>>`
      SELECT extract(epoch FROM timezone('UTC', now()) - min("runAt"))::float8 AS seconds
       FROM "Job" WHERE status = 'queued' AND "runAt" <= timezone('UTC', now())
    `,
    db.job.findMany({
      where: { OR: [{ status: "failed" }, { status: "queued", attempts: { gt: 0 } }] },
      orderBy: { updatedAt: "desc" },
      take: 20,
      select: {
        id: true,
        kind: true,
        status: true,
        attempts: true,
        maxAttempts: true,
        lastError: true,
        updatedAt: true,
        runAt: true,
      },
    }),
  ]);
  return {
    counts: counts.map((c) => ({ kind: c.kind, status: c.status, count: c._count._all })),
    oldestDueSeconds: Math.round(lag[0]?.seconds ?? 0),
    failures,
  };
}

/** Finished jobs are kept a while for the admin page, then deleted (by jobs:retention). */
export async function pruneJobs(db: Db, olderThan: Date): Promise<number> {
  const r = await db.job.deleteMany({ where: { status: "done", finishedAt: { lt: olderThan } } });
  return r.count;
}
