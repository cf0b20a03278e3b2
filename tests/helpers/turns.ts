// Shared by the tests that run whole turns: collect a turn's events, and run
// its after-the-answer work (titles, summaries, learning) when the test says so.
import type { TurnEvent } from "@/lib/chat/turn";
import type { Db } from "@/lib/db/client";
import { runDueJobs } from "@/lib/jobs/worker";

export async function collect(gen: AsyncGenerator<TurnEvent>): Promise<TurnEvent[]> {
  const events: TurnEvent[] = [];
  for await (const e of gen) events.push(e);
  return events;
}

/**
 * A stand-in for Next's `after()`: tasks start at once; `flush()` waits for them
 * all and then runs the jobs the turn queued (titles, summaries, learning), as
 * the worker would.
 */
export function deferred(db?: () => Db) {
  const tasks: Array<Promise<void>> = [];
  return {
    defer: (task: () => Promise<void>) => void tasks.push(task()),
    flush: async () => {
      while (tasks.length) await tasks.shift();
      if (db) await runDueJobs(db());
    },
  };
}
