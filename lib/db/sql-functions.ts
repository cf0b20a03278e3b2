// The database functions' one home: prisma/sql/functions/<name>.sql holds each
// function's current source. Migrations stay the only way a database changes;
// `npm run db:functions -- <name>` writes the migration that brings the
// migrated database to the sources, and tests/sql-functions.test.ts fails
// while the two disagree. "Agree" is judged by PostgreSQL itself: the
// definitions it reports (pg_get_functiondef) after the migrations, against
// those after the sources are run on top of them.
import fs from "node:fs";
import path from "node:path";
import { openDatabase, type SqlConnection } from "./engine";
import { applyMigrations } from "./migrate";

export const FUNCTIONS_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "prisma", "sql", "functions");

export type FunctionSource = { name: string; file: string; sql: string };

export function functionSources(dir = FUNCTIONS_DIR): FunctionSource[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => ({
      name: f.replace(/\.sql$/, ""),
      file: path.join(dir, f),
      sql: fs.readFileSync(path.join(dir, f), "utf8"),
    }));
}

/** Every app function (mnemo_*) by signature, with its definition as PostgreSQL prints it. */
async function definitions(c: SqlConnection): Promise<Map<string, string>> {
  const rows = await c.query<{ sig: string; def: string }>(
    `SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS sig, pg_get_functiondef(p.oid) AS def
     FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'mnemo\\_%' ORDER BY 1`,
  );
  return new Map(rows.map((r) => [r.sig, r.def]));
}

export type FunctionDrift = {
  /** Sources whose function differs from (or is missing in) the migrated database. */
  changed: FunctionSource[];
  /** Signatures the migrations leave that no source makes (a renamed or re-typed function's old self). */
  stale: string[];
  /** Signatures whose returned columns change: PostgreSQL replaces them only after a DROP. */
  retyped: string[];
};

/** PostgreSQL's "cannot change return type of existing function", and the signature its hint says to drop. */
function retypedSignature(e: unknown): string | null {
  const err = e as { code?: string; hint?: string };
  if (err?.code !== "42P13") return null;
  return err.hint?.match(/DROP FUNCTION (.+\)) first/)?.[1] ?? null;
}

/** How the migrated database's functions differ from the sources (two scratch embedded databases). */
export async function functionDrift(sources = functionSources()): Promise<FunctionDrift> {
  const migrated = await openDatabase({ kind: "pglite", dataDir: "", pgliteDir: null });
  const fromSources = await openDatabase({ kind: "pglite", dataDir: "", pgliteDir: null });
  try {
    const before = await migrated.withConnection(async (c) => {
      await applyMigrations(c);
      // As pg_dump does: a function's body may call one whose source comes later.
      await c.exec("SET check_function_bodies = false");
      return definitions(c);
    });
    const changed: FunctionSource[] = [];
    const retyped: string[] = [];
    for (const s of sources) {
      const after = await migrated.withConnection(async (c) => {
        try {
          await c.exec(s.sql);
        } catch (e) {
          const sig = retypedSignature(e);
          if (!sig) throw e;
          retyped.push(sig);
          await c.exec(`DROP FUNCTION ${sig}`);
          await c.exec(s.sql);
        }
        return definitions(c);
      });
      const differs = [...after].some(([sig, def]) => before.get(sig) !== def);
      if (differs) changed.push(s);
      for (const [sig, def] of after) before.set(sig, def);
    }
    // The signatures the sources make on their own: the migrated schema without any app function, then the sources.
    const made = await fromSources.withConnection(async (c) => {
      await applyMigrations(c);
      for (const sig of (await definitions(c)).keys()) await c.exec(`DROP FUNCTION ${sig} CASCADE`);
      await c.exec("SET check_function_bodies = false");
      for (const s of sources) await c.exec(s.sql);
      return definitions(c);
    });
    const migratedSigs = await migrated.withConnection(definitions);
    const stale = [...migratedSigs.keys()].filter((sig) => !made.has(sig));
    return { changed, stale, retyped };
  } finally {
    await migrated.close();
    await fromSources.close();
  }
}

/** The SQL of a migration that brings the migrated database to the sources ("" when nothing differs). */
export function driftMigration(drift: FunctionDrift): string {
  const parts = [
    ...[...drift.stale, ...drift.retyped].map((sig) => `DROP FUNCTION ${sig};`),
    ...drift.changed.map((s) => `-- from prisma/sql/functions/${path.basename(s.file)}\n${s.sql.trim()}`),
  ];
  return parts.length ? parts.join("\n\n") + "\n" : "";
}
