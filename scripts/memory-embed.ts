// `npm run memory:embed`: gives every memory and message its vector for the
// configured embedding model (MNEMO_EMBEDDING_MODEL or Admin → Model settings),
// with a progress bar. Rows already embedded by that model are skipped, so a
// run that stops (Ctrl+C, crash, endpoint outage) resumes where it left off.
// `-- --user <id>` limits it to one user. Prints one JSON line of counts last.
import cliProgress from "cli-progress";
import { closeDb, getDb } from "@/lib/db/client";
import { startup } from "@/lib/startup";
import { countPending, embedPending } from "@/lib/memory/embed";
import { resolveEmbedder } from "@/lib/llm/embeddings";

async function main() {
  await startup();
  const db = await getDb();
  const i = process.argv.indexOf("--user");
  const userId = i > 0 ? process.argv[i + 1] : undefined;
  const e = await resolveEmbedder(db);
  if (!e) {
    console.error(
      "No embedding model is configured: set MNEMO_EMBEDDING_MODEL (or Admin → Model settings) and the model connection.",
    );
    process.exitCode = 2;
    return;
  }
  const total = await countPending(db, e.model, userId);
  const bar = new cliProgress.SingleBar(
    {
      format: `embedding with ${e.model} [{bar}] {value}/{total} rows · {eta_formatted} left`,
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 5000,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  try {
    const r = await embedPending(db, { userId, onProgress: (p) => bar.update(p.embedded + p.unembeddable) });
    bar.stop();
    console.log(
      JSON.stringify({ model: e.model, embedded: r.embedded, unembeddable: r.unembeddable, remaining: r.remaining }),
    );
  } catch (err) {
    bar.stop();
    const left = await countPending(db, e.model, userId);
    console.error(
      `Stopped: ${(err as Error).message.split("\n")[0].replace(/\.$/, "")}. ${left} rows still need a vector; run it again to resume.`,
    );
    process.exitCode = 1;
  }
}

main()
  .catch((e) => {
    console.error(`memory:embed failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().then(() => process.exit()));
