// What every app instance runs besides serving requests: the sweeper that marks
// answers whose writer went away as interrupted, planner statistics for the
// embedded database (lib/db/statistics.ts), the loading of the built-in sentence
// encoder, of the spelling dictionary and of WordNet's nouns, and (unless MNEMO_JOBS=off, when
// `npm run worker` does it) the job worker. Both are safe to run in any
// number of instances at once.
import { getConfig } from "./config";
import { getDb } from "./db/client";
import { sweepExpiredAnswers } from "./chat/leases";
import { startWorker } from "./jobs/worker";
import { loadSpeller } from "./memory/spelling";
import { loadRelatedWords } from "./memory/related-words";
import { sweepDrafts } from "./attachments/store";
import { indexOlderDocuments } from "./attachments/passage-index";
import { removeOrphanObjects, removeReleasedObjects } from "./attachments/file-store";
import { pruneGoneVectors } from "./memory/kept-vectors";
import { ANALYZE_EVERY_MS, refreshStatistics } from "./db/statistics";
import { count } from "@/lib/text/plural";
import { questionVectorStats, warmBuiltinEmbedder } from "./llm/embeddings";

const SWEEP_MS = 15_000;
/** How often an instance looks through the object store for orphans (a listing of the whole prefix). */
const ORPHAN_SWEEP_MS = 6 * 3_600_000;

export function startSweeper(): () => void {
  let orphansAt = 0;
  const sweep = async () => {
    try {
      const db = await getDb();
      const n = await sweepExpiredAnswers(db);
      if (n) console.log(`[mnemo] marked ${count(n, "answer")} interrupted (their writer went away)`);
      await sweepDrafts(db);
      await pruneGoneVectors(db);
      const removed = await removeReleasedObjects(db);
      if (removed) console.log(`[mnemo] removed ${count(removed, "deleted file")} from object storage`);
      if (Date.now() - orphansAt > ORPHAN_SWEEP_MS) {
        orphansAt = Date.now();
        const orphans = await removeOrphanObjects(db);
        if (orphans) console.log(`[mnemo] removed ${count(orphans, "orphaned file")} from object storage`);
      }
      const indexed = await indexOlderDocuments(db);
      if (indexed) console.log(`[mnemo] made ${count(indexed, "older document")} searchable`);
    } catch (e) {
      console.error(`[mnemo] sweeper: ${(e as Error).message.split("\n").slice(-1)[0]}`);
    }
  };
  void sweep();
  const t = setInterval(sweep, SWEEP_MS);
  t.unref();
  return () => clearInterval(t);
}

/** The embedded database's planner statistics: soon after start, then every half hour. */
function startStatistics(): void {
  const run = () =>
    refreshStatistics().catch((e) =>
      console.error(`[mnemo] statistics: ${(e as Error).message.split("\n").slice(-1)[0]}`),
    );
  setTimeout(run, 10_000).unref();
  setInterval(run, ANALYZE_EVERY_MS).unref();
}

/** At exit, how many questions went on by words only (the question's vector late or failed) since start. */
function reportQuestionVectorsAtExit(): void {
  process.once("exit", () => {
    const { asked, byWords } = questionVectorStats();
    if (asked) console.log(`[mnemo] embeddings: ${byWords} of ${asked} questions by words only since start`);
  });
}

export function startBackground(): void {
  startSweeper();
  reportQuestionVectorsAtExit();
  startStatistics();
  getDb()
    .then(warmBuiltinEmbedder)
    .catch((e) => console.error(`[mnemo] built-in embeddings: ${(e as Error).message}`));
  // The first question's words are checked without waiting for the dictionary to be read.
  void loadSpeller();
  setImmediate(loadRelatedWords);
  if (getConfig().jobsInProcess) startWorker(getDb);
}
