// Real databases for integration tests and benchmarks: a fresh in-memory PGlite always, and a
// fresh PostgreSQL database when TEST_DATABASE_URL is set. Both are copies of a database the
// project's migrations were applied to exactly as production does (testing/database-templates.ts).
import pg from "pg";
import { PrismaClient } from "@/lib/generated/prisma/client";
import { newPrismaClient } from "@/lib/db/prisma";
import { openDatabase, type OpenDatabase } from "@/lib/db/engine";
import { applyMigrations } from "@/lib/db/migrate";
import { pgliteTemplate, postgresTemplate } from "./database-templates";

export type Engine = "pglite" | "postgres";
export const engines: Engine[] = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];

export type TestDb = {
  engine: Engine;
  db: PrismaClient;
  database: OpenDatabase;
  /** PostgreSQL only: the URL of this test's own database (for a second "instance"). */
  url?: string;
  newClient(): Promise<{ db: PrismaClient; close(): Promise<void> }>;
  close(): Promise<void>;
};

let counter = 0;

/** Creates an empty PostgreSQL database next to `baseUrl` (a copy of `template` if given) and returns its URL. */
export async function createPostgresDatabase(baseUrl: string, prefix: string, template?: string): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now()}_${counter++}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  await admin.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function createTestDb(engine: Engine): Promise<TestDb> {
  if (engine === "pglite") {
    const snapshot = await pgliteTemplate();
    const database = await openDatabase({ kind: "pglite", dataDir: "", pgliteDir: null, snapshot });
    await database.withConnection((c) => applyMigrations(c)); // nothing pending: the template is of this schema
    const db = newPrismaClient(database.factory, database.pool);
    return {
      engine,
      db,
      database,
      // PGlite has one connection per process: a second client shares it.
      newClient: async () => ({ db: newPrismaClient(database.factory, database.pool), close: async () => {} }),
      close: async () => {
        await db.$disconnect();
        await database.close();
      },
    };
  }
  const base = process.env.TEST_DATABASE_URL!;
  const url = await createPostgresDatabase(base, "mnemo_t", await postgresTemplate(base));
  const name = new URL(url).pathname.slice(1);
  const database = await openDatabase({ kind: "postgres", url });
  await database.withConnection((c) => applyMigrations(c));
  const db = newPrismaClient(database.factory, database.pool);
  const extra: Array<{ db: PrismaClient; close: () => Promise<void> }> = [];
  return {
    engine,
    db,
    database,
    url,
    newClient: async () => {
      const other = await openDatabase({ kind: "postgres", url });
      const c = newPrismaClient(other.factory, other.pool);
      const client = {
        db: c,
        close: async () => {
          await c.$disconnect();
          await other.close();
        },
      };
      extra.push(client);
      return client;
    },
    close: async () => {
      await Promise.all([db.$disconnect().then(() => database.close()), ...extra.map((c) => c.close())]);
      const a = new pg.Client({ connectionString: base });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}
