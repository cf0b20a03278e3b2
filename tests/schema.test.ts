// The migrations and schema.prisma must describe the same database, and a
// database that is behind must be caught at startup.
import { spawnSync } from "node:child_process";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase, type SqlConnection } from "@/lib/db/engine";
import { applyMigrations, listMigrations, migrationStatus } from "@/lib/db/migrate";
import { ensureSchema, StartupError } from "@/lib/startup";
import { createTestDb, engines } from "@/testing/databases";
import { dropStalePostgresTemplates, postgresTemplateName } from "@/testing/database-templates";

async function catalog(c: SqlConnection) {
  const q = (sql: string) => c.query(sql);
  return {
    columns: await q(`SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
      ORDER BY 1, 2`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes
      WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1, 2`),
    // Constraint triggers (contype 't') are triggers, which schema.prisma does not describe, as it does not the others.
    constraints: await q(`SELECT conrelid::regclass::text AS tbl, conname, contype, pg_get_constraintdef(oid) AS def
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text NOT IN ('_prisma_migrations', '"_prisma_migrations"')
        AND contype <> 't'
      ORDER BY 1, 2`),
    enums: await q(`SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text AS labels
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY 1 ORDER BY 1`),
  };
}

describe("schema and migrations", () => {
  it("schema.prisma and the migrations produce the same catalog", async () => {
    const diff = spawnSync(
      process.execPath,
      [
        "scripts/prisma.mjs",
        "migrate",
        "diff",
        "--from-empty",
        "--to-schema-datamodel",
        "prisma/schema.prisma",
        "--script",
      ],
      { encoding: "utf8" },
    );
    expect(diff.status, diff.stderr).toBe(0);
    const fromMigrations = await openDatabase({ kind: "pglite", dataDir: "", pgliteDir: null });
    const fromSchema = await openDatabase({ kind: "pglite", dataDir: "", pgliteDir: null });
    try {
      await fromMigrations.withConnection((c) => applyMigrations(c));
      await fromSchema.withConnection((c) => c.exec(diff.stdout));
      const a = await fromMigrations.withConnection(catalog);
      const b = await fromSchema.withConnection(catalog);
      expect(a.columns.length).toBeGreaterThan(10);
      expect(a).toEqual(b);
    } finally {
      await fromMigrations.close();
      await fromSchema.close();
    }
  });

  it("migration folder names sort in the order they were made", () => {
    const names = listMigrations().map((m) => m.name);
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(n).toMatch(/^\d{14}_[a-z0-9_]+$/);
  });
});

describe.each(engines)("startup schema check on %s", (engine) => {
  const created: string[] = [];
  afterAll(async () => {
    if (!created.length) return;
    const a = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await a.connect();
    for (const n of created) await a.query(`DROP DATABASE IF EXISTS ${n} WITH (FORCE)`);
    await a.end();
  });

  async function emptyDatabase() {
    if (engine === "pglite") return openDatabase({ kind: "pglite", dataDir: "", pgliteDir: null });
    const name = `mnemo_start_${Date.now()}`;
    const a = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await a.connect();
    await a.query(`CREATE DATABASE ${name}`);
    await a.end();
    created.push(name);
    const u = new URL(process.env.TEST_DATABASE_URL!);
    u.pathname = `/${name}`;
    return openDatabase({ kind: "postgres", url: u.toString() });
  }

  it(
    engine === "postgres"
      ? "production refuses a schema that is behind, with the command to run"
      : "the embedded database migrates itself",
    async () => {
      const db = await emptyDatabase();
      try {
        if (engine === "postgres") {
          const err = await ensureSchema(db, true).catch((e) => e);
          expect(err).toBeInstanceOf(StartupError);
          expect(err.message).toMatch(
            /^Database schema is behind \(\d+ pending migrations?, newest \S+\): run `npm run db:migrate`/,
          );
        }
        const applied = await ensureSchema(db, engine === "pglite");
        expect(applied).toEqual(listMigrations().map((m) => m.name));
        expect((await db.withConnection((c) => migrationStatus(c))).pending).toEqual([]);
        expect(await ensureSchema(db, true)).toEqual([]);
      } finally {
        await db.close();
      }
    },
  );
});

describe.runIf(process.env.TEST_DATABASE_URL)("the test suite's PostgreSQL templates", () => {
  it("a template of other migrations is dropped, one in use is left, this checkout's is kept", async () => {
    // This run's own template exists once a PostgreSQL test database has been made.
    await createTestDb("postgres").then((t) => t.close());
    const a = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await a.connect();
    const [old, busy] = ["0123456789abcdef", "fedcba9876543210"].map((h) => `mnemo_template_${h}`);
    for (const n of [old, busy]) await a.query(`CREATE DATABASE ${n}`);
    const u = new URL(process.env.TEST_DATABASE_URL!);
    u.pathname = `/${busy}`;
    const user = new pg.Client({ connectionString: u.toString() });
    await user.connect();
    try {
      expect(await dropStalePostgresTemplates(a, postgresTemplateName())).toContain(old);
      const left = await a.query(`SELECT datname FROM pg_database WHERE datname = ANY($1) ORDER BY 1`, [
        [old, busy, postgresTemplateName()],
      ]);
      expect(left.rows.map((r) => r.datname)).toEqual([busy, postgresTemplateName()].sort());
    } finally {
      await user.end();
      for (const n of [old, busy]) await a.query(`DROP DATABASE IF EXISTS ${n} WITH (FORCE)`);
      await a.end();
    }
  });
});
