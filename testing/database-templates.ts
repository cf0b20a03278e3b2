// Migrated empty databases to copy from, so a test's fresh database costs a copy instead of initdb plus every
// migration (PGlite: about 1 s instead of 3–4 s; measured in docs/benchmarks.md, "the test suite's databases").
// Each template is named by a hash of the migrations and the PGlite version: a new or changed migration makes a new
// one, and the copy still goes through applyMigrations, so it can never be behind.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { applyMigrations, listMigrations } from "@/lib/db/migrate";
import { openDatabase, pgliteConnection } from "@/lib/db/engine";

const TEMPLATE_DIR = path.join(process.cwd(), ".tmp", "test-databases");

function schemaKey(): string {
  const h = crypto.createHash("sha256");
  for (const m of listMigrations()) h.update(`${m.name}:${m.checksum}\n`);
  const manifest = path.join(process.cwd(), "node_modules", "@electric-sql", "pglite", "package.json");
  const pglite = JSON.parse(fs.readFileSync(manifest, "utf8"));
  h.update(`pglite:${pglite.version}`);
  return h.digest("hex").slice(0, 16);
}

let pgliteFiles: Promise<Blob> | null = null;

/** The files of a migrated empty PGlite database: read from .tmp, or made once and kept there for the next run. */
export function pgliteTemplate(): Promise<Blob> {
  pgliteFiles ??= readOrMakePgliteTemplate();
  return pgliteFiles;
}

async function readOrMakePgliteTemplate(): Promise<Blob> {
  const file = path.join(TEMPLATE_DIR, `pglite-${schemaKey()}.tar`);
  if (fs.existsSync(file)) return new Blob([fs.readFileSync(file)]);
  const { PGlite } = await import("@electric-sql/pglite");
  const pglite = new PGlite();
  try {
    await applyMigrations(pgliteConnection(pglite));
    const files = await pglite.dumpDataDir("none");
    fs.mkdirSync(TEMPLATE_DIR, { recursive: true });
    for (const old of fs.readdirSync(TEMPLATE_DIR)) {
      if (old.startsWith("pglite-")) fs.rmSync(path.join(TEMPLATE_DIR, old), { force: true });
    }
    // Written aside and renamed: a second worker never reads half a file.
    const part = `${file}.${process.pid}.part`;
    fs.writeFileSync(part, Buffer.from(await files.arrayBuffer()));
    fs.renameSync(part, file);
    return files;
  } finally {
    await pglite.close();
  }
}

const postgresTemplates = new Map<string, Promise<string>>();

/** The name of a migrated empty database on the server at `baseUrl`, made once per schema. */
export function postgresTemplate(baseUrl: string): Promise<string> {
  let name = postgresTemplates.get(baseUrl);
  if (!name) {
    name = makePostgresTemplate(baseUrl);
    postgresTemplates.set(baseUrl, name);
  }
  return name;
}

/** The name of the PostgreSQL template of this checkout's migrations. */
export const postgresTemplateName = () => `mnemo_template_${schemaKey()}`;

async function makePostgresTemplate(baseUrl: string): Promise<string> {
  const name = postgresTemplateName();
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await dropStalePostgresTemplates(admin, name);
    const found = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name]);
    if (found.rowCount) return name;
    // Made under a name of its own and renamed when complete: another process never copies a half-made one.
    const making = `${name}_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${making}`);
    await admin.query(`CREATE DATABASE ${making}`);
    const u = new URL(baseUrl);
    u.pathname = `/${making}`;
    const database = await openDatabase({ kind: "postgres", url: u.toString() });
    try {
      await database.withConnection((c) => applyMigrations(c));
    } finally {
      await database.close();
    }
    try {
      await admin.query(`ALTER DATABASE ${making} RENAME TO ${name}`);
    } catch {
      await admin.query(`DROP DATABASE IF EXISTS ${making}`); // another process made it first
    }
    return name;
  } finally {
    await admin.end();
  }
}

/**
 * Templates of other schemas (older migrations) on this server, dropped so a long-lived test server does not collect
 * one per change. One in use (a run of another checkout copying from it) refuses the drop and is left for later.
 */
export async function dropStalePostgresTemplates(admin: pg.Client, keep: string): Promise<string[]> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname ~ '^mnemo_template_[0-9a-f]{16}$' AND datname <> $1`,
    [keep],
  );
  const dropped: string[] = [];
  for (const { datname } of rows) {
    try {
      await admin.query(`DROP DATABASE ${datname}`);
      dropped.push(datname);
    } catch {
      // In use: the next run drops it.
    }
  }
  return dropped;
}
