// Runs once when the server starts (instrumentation.ts): validates the
// configuration, opens the database and makes sure its schema is current.
// Any problem stops startup with one line that says what to do.
import { ConfigError, getConfig } from "./config";
import { describeTarget, resolveDatabaseTarget } from "./db/engine";
import { getDatabase } from "./db/client";
import { applyMigrations, migrationStatus } from "./db/migrate";

export class StartupError extends Error {}

export async function startup(): Promise<void> {
  const config = getConfig();
  const target = resolveDatabaseTarget();
  const { database } = await getDatabase(); // the embedded database migrates itself here
  if (target.kind === "postgres") {
    const status = await database.withConnection((c) => migrationStatus(c));
    if (status.failed.length) {
      throw new StartupError(`Database migration ${status.failed[0]} failed earlier: repair it, then run \`npm run db:migrate\`.`);
    }
    if (status.pending.length) {
      if (config.env === "production") {
        throw new StartupError(
          `Database schema is behind (${status.pending.length} pending migration(s), newest ${status.pending.at(-1)}): run \`npm run db:migrate\` with the same DATABASE_URL, then start again.`,
        );
      }
      const applied = await database.withConnection((c) => applyMigrations(c));
      console.log(`[mnemo] applied ${applied.length} migration(s) to ${describeTarget(target)} (development)`);
    }
  }
  console.log(`[mnemo] database: ${describeTarget(target)}`);
}

export async function startupOrExit(): Promise<void> {
  try {
    await startup();
  } catch (e) {
    const msg = e instanceof ConfigError || e instanceof StartupError ? e.message : `Startup failed: ${(e as Error).message}`;
    console.error(`[mnemo] ${msg}`);
    process.exit(1);
  }
}
