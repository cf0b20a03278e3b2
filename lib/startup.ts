// Runs once when the server starts (instrumentation.ts): validates the
// configuration, opens the database and makes sure its schema is current.
// Any problem stops startup with one line that says what to do.
import { ConfigError, getConfig } from "./config";
import { describeTarget, type OpenDatabase } from "./db/engine";
import { getDatabase } from "./db/client";
import { applyMigrations, migrationStatus } from "./db/migrate";
import { DatabaseInUseError } from "./db/owner";
import { count } from "./text/plural";

export class StartupError extends Error {}

/**
 * The embedded database (and PostgreSQL in development) is migrated here; a
 * production PostgreSQL that is behind stops startup: migrating a shared
 * database is an operator's step, not a side effect of starting one instance.
 */
export async function ensureSchema(database: OpenDatabase, production: boolean): Promise<string[]> {
  const status = await database.withConnection((c) => migrationStatus(c));
  if (status.failed.length) {
    throw new StartupError(
      `Database migration ${status.failed[0]} failed earlier: repair it, then run \`npm run db:migrate\`.`,
    );
  }
  if (!status.pending.length) return [];
  if (production && database.target.kind === "postgres") {
    throw new StartupError(
      `Database schema is behind (${count(status.pending.length, "pending migration")}, newest ${status.pending.at(-1)}): run \`npm run db:migrate\` with the same DATABASE_URL, then start again.`,
    );
  }
  return database.withConnection((c) => applyMigrations(c));
}

export async function startup(): Promise<void> {
  const config = getConfig();
  const { database } = await getDatabase(); // the embedded database migrates itself on open
  const applied = await ensureSchema(database, config.env === "production");
  if (applied.length) console.log(`[mnemo] applied ${count(applied.length, "migration")}`);
  console.log(`[mnemo] database: ${describeTarget(database.target)}`);
}

export async function startupOrExit(): Promise<void> {
  try {
    await startup();
  } catch (e) {
    const msg =
      e instanceof ConfigError || e instanceof StartupError || e instanceof DatabaseInUseError
        ? e.message
        : `Startup failed: ${(e as Error).message}`;
    console.error(`[mnemo] ${msg}`);
    process.exit(1);
  }
}
