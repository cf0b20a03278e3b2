// `npm run worker`: runs the background jobs (titles, summaries, memory
// learning) and the interrupted-answer sweeper in a process of its own, for
// operators who scale out and set MNEMO_JOBS=off on the web instances.
// `-- --once` runs the due jobs, prints one JSON line of counts, and exits.
// With `--once` it is an operator command: beside a running app on the embedded
// database it runs inside the app (lib/ops/cli.ts). Without it, on the embedded
// database, the app's own worker already runs the jobs: a second process is refused.
import { closeDb, getDb } from "@/lib/db/client";
import { startup } from "@/lib/startup";
import { startSweeper } from "@/lib/background";
import { startWorker } from "@/lib/jobs/worker";
import { runOperatorCli } from "@/lib/ops/cli";

async function main() {
  await startup();
  const stopSweeper = startSweeper();
  const stopWorker = startWorker(getDb);
  console.log("[mnemo] worker running; Ctrl+C stops it");
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  stopSweeper();
  await stopWorker();
}

if (process.argv.includes("--once")) void runOperatorCli("worker");
else
  main()
    .catch((e) => {
      console.error(`worker failed: ${(e as Error).message}`);
      process.exitCode = 1;
    })
    .finally(() => closeDb().then(() => process.exit()));
