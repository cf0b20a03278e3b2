// Runs queued jobs: in each web instance by default (started from
// instrumentation.ts), or apart with `npm run worker` (MNEMO_JOBS=off on the
// web instances). A process runs its jobs through one drain with a few lanes:
// the polling loop, an in-process enqueue and the answer that just finished
// all join the drain that is already running instead of starting their own,
// so queued work never outnumbers the live chats it runs beside.
import { UsageLimitSkip } from "@/lib/llm/metered";
import type { Db } from "@/lib/db/client";
import { claim, complete, fail, HEARTBEAT_SECONDS, onEnqueue, renewLock, type JobKind } from "./queue";
import type { Job } from "@/lib/generated/prisma/client";
import { PermanentJobError, runJob } from "./handlers";
import { getConfig } from "@/lib/config";

export type RunStats = { done: number; retried: number; failed: number };

type RunOptions = { lanes?: number; max?: number; kinds?: JobKind[]; stopped?: () => boolean };

/** Claims and runs due jobs, `lanes` at a time, until none are due (or `max` were claimed, or `stopped()`). */
export async function runDueJobs(db: Db, opts: RunOptions = {}): Promise<RunStats> {
  const stats: RunStats = { done: 0, retried: 0, failed: 0 };
  let claimed = 0;
  const max = opts.max ?? Infinity;
  const lane = async () => {
    while (claimed < max && !opts.stopped?.()) {
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
    if (e instanceof UsageLimitSkip) {
      // The user's allowance for today is used up: the work is dropped, not retried into tomorrow.
      console.log(`[mnemo] job ${job.kind} ${job.id}: ${e.message}`);
      await complete(db, job);
      return "done";
    }
    const message = e instanceof Error ? e.message : String(e);
    const outcome = await fail(
      db,
      e instanceof PermanentJobError ? { ...job, attempts: job.maxAttempts } : job,
      message,
    );
    const what = `job ${job.kind} ${job.id} attempt ${job.attempts}`;
    console.error(`[mnemo] ${what} failed (${outcome}): ${message.split("\n")[0]}`);
    return outcome === "failed" ? "failed" : "retried";
  }
}

/** The database may be down: say so in one line; the next poll tries again. */
const logWorkerError = (e: unknown) =>
  console.error(`[mnemo] job worker: ${(e as Error).message.split("\n").slice(-1)[0]}`);

/** `stopping`: the worker is shutting down; lanes finish their job and claim no more. */
type Drain = { running: Promise<void> | null; again: boolean; stopping: boolean };
// On globalThis: route handlers and instrumentation are separate module instances in Next.js.
// One drain per database (a process has one; tests open several).
const g = globalThis as typeof globalThis & { __mnemoJobDrains?: WeakMap<Db, Drain> };
const drains = (g.__mnemoJobDrains ??= new WeakMap());
const drainOf = (db: Db): Drain => {
  let d = drains.get(db);
  if (!d) drains.set(db, (d = { running: null, again: false, stopping: false }));
  return d;
};

/**
 * Runs this process's due jobs, joining the drain already under way if there
 * is one (it then looks again before it ends, so nothing enqueued meanwhile
 * waits for the next poll). Never rejects: a database outage is logged and
 * the next poll tries again. The promise settles when the drain ends.
 */
export function drainJobs(db: Db): Promise<void> {
  const drain = drainOf(db);
  if (drain.running) {
    drain.again = true;
    return drain.running;
  }
  drain.running = (async () => {
    try {
      do {
        drain.again = false;
        await runDueJobs(db, { stopped: () => drain.stopping });
      } while (drain.again && !drain.stopping);
    } catch (e) {
      logWorkerError(e);
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
  let drain: Drain | null = null;
  // While a drain runs, it looks again before ending; otherwise the sleeping loop wakes.
  const unsubscribe = onEnqueue(() => (drain?.running ? (drain.again = true) : wake?.()));
  const loop = (async () => {
    while (!stopped) {
      await getDb().then((db) => {
        drain = drainOf(db);
        return drainJobs(db);
      }, logWorkerError);
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
    if (drain) drain.stopping = true;
    unsubscribe();
    wake?.();
    await loop;
    await drain?.running;
    if (drain) drain.stopping = false;
  };
}
