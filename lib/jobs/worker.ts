// Runs queued jobs: in each web instance by default (started from
// instrumentation.ts), or apart with `npm run worker` (MNEMO_JOBS=off on the
// web instances). Each loop claims a few due jobs, runs them, and sleeps until
// the next poll or an in-process enqueue wakes it.
import type { Db } from "@/lib/db/client";
import { claim, complete, fail, HEARTBEAT_SECONDS, onEnqueue, renewLock, type JobKind } from "./queue";
import type { Job } from "@/lib/generated/prisma/client";
import { PermanentJobError, runJob } from "./handlers";

export type RunStats = { done: number; retried: number; failed: number };

/** Claims and runs due jobs until none are due (or `max` ran). */
export async function runDueJobs(db: Db, opts: { batch?: number; max?: number; kinds?: JobKind[] } = {}): Promise<RunStats> {
  const stats: RunStats = { done: 0, retried: 0, failed: 0 };
  const max = opts.max ?? Infinity;
  while (stats.done + stats.retried + stats.failed < max) {
    const jobs = await claim(db, opts.batch ?? 2, opts.kinds);
    if (!jobs.length) break;
    await Promise.all(
      jobs.map(async (job) => {
        try {
          await withHeartbeat(db, job, () => runJob(db, job.kind, job.payload));
          await complete(db, job);
          stats.done++;
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          const outcome = await fail(db, e instanceof PermanentJobError ? { ...job, attempts: job.maxAttempts } : job, message);
          stats[outcome === "failed" ? "failed" : "retried"]++;
          console.error(`[mnemo] job ${job.kind} ${job.id} attempt ${job.attempts} failed (${outcome}): ${message.split("\n")[0]}`);
        }
      }),
    );
  }
  return stats;
}

/** Runs `work` while renewing the job's lock, so other workers leave it alone only while this process lives. */
async function withHeartbeat<T>(db: Db, job: Job, work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => {
    renewLock(db, job).catch(() => {
      // The database is unreachable: the lock may lapse, and handlers are idempotent.
    });
  }, HEARTBEAT_SECONDS * 1000);
  timer.unref();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Starts a polling worker; returns a function that stops it. */
export function startWorker(getDb: () => Promise<Db>, opts: { pollMs?: number } = {}): () => Promise<void> {
  const pollMs = opts.pollMs ?? 2000;
  let stopped = false;
  let wake: (() => void) | null = null;
  const unsubscribe = onEnqueue(() => wake?.());
  const loop = (async () => {
    while (!stopped) {
      try {
        await runDueJobs(await getDb(), { max: 20 });
      } catch (e) {
        // The database may be down; try again at the next poll.
        console.error(`[mnemo] job worker: ${(e as Error).message.split("\n").slice(-1)[0]}`);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = null;
    }
  })();
  return async () => {
    stopped = true;
    unsubscribe();
    wake?.();
    await loop;
  };
}
