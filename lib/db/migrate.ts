// Applies the forward-only SQL migrations in prisma/migrations, recording them in
// Prisma's own `_prisma_migrations` table (same columns and checksums), so the
// Prisma CLI sees the same state. We run them ourselves because the CLI's wasm
// engine never exits on PGlite and the embedded app must migrate in-process.
import { migrationsDirFromEnv } from "../config";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { SqlConnection } from "./engine";

export type Migration = { name: string; sql: string; checksum: string };

export function migrationsDir(): string {
  // The app runs from the project folder (next start, scripts, tests).
  return migrationsDirFromEnv();
}

export function listMigrations(dir = migrationsDir()): Migration[] {
  return fs
    .readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(/*turbopackIgnore: true*/ dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(/*turbopackIgnore: true*/ dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: crypto.createHash("sha256").update(sql).digest("hex") };
    });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

type Row = { migration_name: string; finished_at: Date | null; rolled_back_at: Date | null };

async function appliedRows(c: SqlConnection): Promise<Row[] | null> {
  const exists = await c.query<{ t: string | null }>(`SELECT to_regclass('"_prisma_migrations"')::text AS t`);
  if (!exists[0]?.t) return null;
  return c.query<Row>(`SELECT migration_name, finished_at, rolled_back_at FROM "_prisma_migrations"`);
}

export type MigrationStatus = { applied: string[]; pending: string[]; failed: string[] };

export async function migrationStatus(c: SqlConnection, all = listMigrations()): Promise<MigrationStatus> {
  const rows = (await appliedRows(c)) ?? [];
  const done = new Set(rows.filter((r) => r.finished_at && !r.rolled_back_at).map((r) => r.migration_name));
  const failed = rows.filter((r) => !r.finished_at && !r.rolled_back_at).map((r) => r.migration_name);
  return {
    applied: all.filter((m) => done.has(m.name)).map((m) => m.name),
    pending: all.filter((m) => !done.has(m.name)).map((m) => m.name),
    failed,
  };
}

// Any constant: serialises concurrent migrators (several app instances starting at once).
const LOCK_ID = 727_073_69;

export async function applyMigrations(c: SqlConnection, all = listMigrations()): Promise<string[]> {
  await c.query(`SELECT pg_advisory_lock(${LOCK_ID})`);
  try {
    await c.exec(CREATE_TABLE);
    const status = await migrationStatus(c, all);
    if (status.failed.length) {
      throw new Error(
        `Migration ${status.failed[0]} failed earlier; fix the database by hand, then mark it rolled back`,
      );
    }
    const applied: string[] = [];
    for (const m of all.filter((m) => status.pending.includes(m.name))) {
      await c.exec("BEGIN");
      try {
        await c.exec(m.sql);
        await c.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [crypto.randomUUID(), m.checksum, m.name],
        );
        await c.exec("COMMIT");
      } catch (e) {
        await c.exec("ROLLBACK");
        throw new Error(`Migration ${m.name} failed: ${(e as Error).message}`);
      }
      applied.push(m.name);
    }
    return applied;
  } finally {
    await c.query(`SELECT pg_advisory_unlock(${LOCK_ID})`);
  }
}
