// `npm run db:migrate`: applies pending migrations to whichever database is configured.
import { openDatabase, resolveDatabaseTarget, describeTarget } from "../lib/db/engine";
import { applyMigrations, migrationStatus } from "../lib/db/migrate";

async function main() {
  const target = resolveDatabaseTarget();
  const db = await openDatabase(target);
  try {
    const applied = await db.withConnection(async (c) => {
      const done = await applyMigrations(c);
      return { done, status: await migrationStatus(c) };
    });
    for (const name of applied.done) console.log(`applied ${name}`);
    console.log(
      `${describeTarget(target)}: ${applied.done.length} migration(s) applied, ${applied.status.applied.length} in total, ${applied.status.pending.length} pending`,
    );
  } finally {
    await db.close();
  }
}

main().catch((e) => {
  console.error(`db:migrate failed: ${(e as Error).message}`);
  process.exit(1);
});
