// `npm run worker`: runs the background jobs (titles, summaries, memory
// learning) and the interrupted-answer sweeper in a process of its own, for
// operators who scale out and set MNEMO_JOBS=off on the web instances.
// `-- --once` runs the due jobs, prints one JSON line of counts, and exits.
import { closeDb, getDb } from "@/lib/db/client";
import { startup } from "@/lib/startup";
import { startSweeper } from "@/lib/background";
import { startWorker, runDueJobs } from "@/lib/jobs/worker";

async function main() {
  await startup();
  if (process.argv.includes("--once")) {
    console.log(JSON.stringify(await runDueJobs(await getDb())));
    return;
  }
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

main()
  .catch((e) => {
    console.error(`worker failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().then(() => process.exit()));
