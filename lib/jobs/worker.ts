// Runs queued jobs: in each web instance by default (started from
// instrumentation.ts), or apart with `npm run worker` (MNEMO_JOBS=off on the
// web instances). A process runs its jobs through one drain with a few lanes:
// the polling loop, an in-process enqueue and the answer that just finished
// all join the drain that is already running instead of starting their own,
// so queued work never outnumbers the live chats it runs beside.
import type { Db } from "@/lib/db/client";
import { claim, complete, fail, HEARTBEAT_SECONDS, onEnqueue, renewLock, type JobKind } from "./queue";
import type { Job } from "@/lib/generated/prisma/client";
import { PermanentJobError, runJob } from "./handlers";
import { getConfig } from "@/lib/config";

export type RunStats = { done: number; retried: number; failed: number };

/** Claims and runs due jobs, `lanes` at a time, until none are due (or `max` were claimed). */
export async function runDueJobs(db: Db, opts: { lanes?: number; max?: number; kinds?: JobKind[] } = {}): Promise<RunStats> {
  const stats: RunStats = { done: 0, retried: 0, failed: 0 };
  let claimed = 0;
  const max = opts.max ?? Infinity;
  const lane = async () => {
    while (claimed < max) {
      claimed++;
      const [job] = await claim(db, 1, opts.kinds);
      if (!job) {
        claimed--;
        return;
      }
      stats[await runOne(db, job)]++;
    }
  };
  await Promise.all(Array.from({ length: opts.lanes ?? getConfig().jobLanes }, lane));
  return stats;
}

async function runOne(db: Db, job: Job): Promise<keyof RunStats> {
  try {
    await withHeartbeat(db, job, () => runJob(db, job.kind, job.payload));
    await complete(db, job);
    return "done";
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const outcome = await fail(db, e instanceof PermanentJobError ? { ...job, attempts: job.maxAttempts } : job, message);
    console.error(`[mnemo] job ${job.kind} ${job.id} attempt ${job.attempts} failed (${outcome}): ${message.split("\n")[0]}`);
    return outcome === "failed" ? "failed" : "retried";
  }
}

type Drain = { running: Promise<void> | null; again: boolean };
// On globalThis: route handlers and instrumentation are separate module instances in Next.js.
const g = globalThis as typeof globalThis & { __mnemoJobDrain?: Drain };
const drain = (g.__mnemoJobDrain ??= { running: null, again: false });

/**
 * Runs this process's due jobs, joining the drain already under way if there
 * is one (it then looks again before it ends, so nothing enqueued meanwhile
 * waits for the next poll). Never rejects: a database outage is logged and
 * the next poll tries again. The promise settles when the drain ends.
 */
export function drainJobs(db: Db): Promise<void> {
  if (drain.running) {
    drain.again = true;
    return drain.running;
  }
  drain.running = (async () => {
    try {
      do {
        drain.again = false;
        await runDueJobs(db);
      } while (drain.again);
    } catch (e) {
      console.error(`[mnemo] job worker: ${(e as Error).message.split("\n").slice(-1)[0]}`);
    } finally {
      drain.running = null;
    }
  })();
  return drain.running;
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

/** Starts a polling worker; an in-process enqueue wakes it at once. Returns a function that stops it. */
export function startWorker(getDb: () => Promise<Db>, opts: { pollMs?: number } = {}): () => Promise<void> {
  const pollMs = opts.pollMs ?? 2000;
  let stopped = false;
  let wake: (() => void) | null = null;
  // While a drain runs, it looks again before ending; otherwise the sleeping loop wakes.
  const unsubscribe = onEnqueue(() => (drain.running ? (drain.again = true) : wake?.()));
  const loop = (async () => {
    while (!stopped) {
      await getDb().then(drainJobs, (e) => console.error(`[mnemo] job worker: ${(e as Error).message.split("\n").slice(-1)[0]}`));
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
