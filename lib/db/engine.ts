// The one place that decides which database Mnemo talks to.
// No DATABASE_URL -> embedded PGlite with its files under ./data/pglite (or $MNEMO_DATA_DIR/pglite).
// DATABASE_URL=postgres://... -> PostgreSQL through @prisma/adapter-pg.
// Used by the app (lib/db/client.ts), prisma.config.ts, the scripts and the tests.
import path from "node:path";
import fs from "node:fs";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { claimEmbeddedDatabase, releaseEmbeddedDatabase } from "./owner";
import { takeTurns, type EmbeddedActivity } from "./embedded-turns";
import { keepQueryStatements, preparedStatements } from "./pglite-statements";
import { databasePoolSize, dataDirFromEnv } from "../config";

export type DatabaseTarget =
  // `snapshot`: an in-memory database (no pgliteDir) starts from these files (PGlite's dumpDataDir) instead of initdb.
  { kind: "pglite"; dataDir: string; pgliteDir: string | null; snapshot?: Blob } | { kind: "postgres"; url: string };

export type Env = Record<string, string | undefined>;

export { dataDirFromEnv };

export function resolveDatabaseTarget(env: Env = process.env): DatabaseTarget {
  const url = env.DATABASE_URL?.trim();
  if (url) {
    if (!/^postgres(ql)?:\/\//.test(url)) {
      throw new Error(
        "DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for the embedded database)",
      );
    }
    return { kind: "postgres", url };
  }
  const dataDir = dataDirFromEnv(env);
  return { kind: "pglite", dataDir, pgliteDir: path.join(dataDir, "pglite") };
}

export function describeTarget(t: DatabaseTarget): string {
  if (t.kind === "pglite") return t.pgliteDir ? `embedded PGlite at ${t.pgliteDir}` : "in-memory PGlite";
  const u = new URL(t.url);
  return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

/** A single connection for raw SQL (migrations, checks): multi-statement exec and parameterised query. */
export type SqlConnection = {
  exec(sql: string): Promise<void>;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
};

/** PostgreSQL connections kept open while idle (see openDatabase). */
const WARM_CONNECTIONS = 5;

/** The database's connections, used outside Prisma by the hot path's reads (lib/db/function-calls.ts). */
export type DirectPool = {
  /** Rows (timestamps as text), or null once the pool has ended (the caller then goes through Prisma). */
  query(sql: string, params: unknown[]): Promise<Record<string, unknown>[] | null>;
  /** Connections the pool can hand out now without anyone waiting (idle, or not yet opened). */
  spare(): number;
};

export type OpenDatabase = {
  target: DatabaseTarget;
  factory: SqlMigrationAwareDriverAdapterFactory;
  /**
   * The hot path's reads go straight to the driver (node-postgres on Prisma's
   * own pool; PGlite's one connection), which saves Prisma's per-query work
   * (~1.4 ms a turn on either engine, measured). Never for transactions: their
   * calls stay on Prisma, on their connection.
   */
  pool: DirectPool | null;
  /** Runs `fn` on one dedicated connection (PGlite has only one anyway). */
  withConnection<T>(fn: (c: SqlConnection) => Promise<T>): Promise<T>;
  /** The embedded database's last answer (lib/db/embedded-turns.ts); none for PostgreSQL. */
  activity: EmbeddedActivity | null;
  close(): Promise<void>;
};

export async function openDatabase(target: DatabaseTarget): Promise<OpenDatabase> {
  if (target.kind === "postgres") {
    const { PrismaPg } = await import("@prisma/adapter-pg");
    const pg = (await import("pg")).default;
    const max = databasePoolSize();
    // Kept open between turns (others close after 10 s idle): a turn's reads use up to five at once, and each
    // server process keeps the plans of the functions it ran. Closed, the next turn paid for new connections
    // and new plans: 48–75 ms after an 11 s pause instead of 10–25 (measured).
    // Idle, they do not keep a script's process alive.
    const min = Math.min(max, WARM_CONNECTIONS);
    const pool = new pg.Pool({ connectionString: target.url, max, min, allowExitOnIdle: true });
    // An idle connection the server dropped must not crash the process (Prisma adds its listener once connected).
    pool.on("error", (e) => console.error(`[mnemo] database connection lost: ${e.message}`));
    // Prisma's $disconnect ends the pool, as it did when Prisma made it.
    const types = rowTypes(pg.types);
    const adapter = new PrismaPg(pool, { disposeExternalPool: true });
    const factory = adapter as unknown as SqlMigrationAwareDriverAdapterFactory;
    return {
      target,
      factory,
      activity: null,
      pool: {
        query: async (sql, params) => {
          if (pool.ending) return null;
          return (await pool.query({ text: sql, values: params.map(toDriverValue), types })).rows;
        },
        spare: () => (pool.ending ? 0 : Math.max(0, pool.idleCount + max - pool.totalCount - pool.waitingCount)),
      },
      async withConnection(fn) {
        const client = new pg.Client({ connectionString: target.url });
        await client.connect();
        try {
          return await fn({
            exec: async (sql) => void (await client.query(sql)),
            query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
          });
        } finally {
          await client.end();
        }
      },
      // Prisma's $disconnect ends the pool; this ends it when Prisma never connected.
      close: async () => {
        if (!pool.ending) await pool.end();
      },
    };
  }

  const { PGlite } = await import("@electric-sql/pglite");
  const { PrismaPGlite } = await import("pglite-prisma-adapter");
  let pglite: InstanceType<typeof PGlite>;
  const dir = target.pgliteDir;
  if (dir) {
    claimEmbeddedDatabase(dir); // one process per data folder (lib/db/owner.ts); throws when another holds it
    try {
      fs.mkdirSync(dir, { recursive: true });
      pglite = new PGlite(dir);
      await pglite.waitReady;
    } catch (e) {
      releaseEmbeddedDatabase(dir);
      throw e;
    }
  } else {
    pglite = new PGlite(target.snapshot ? { loadDataDir: target.snapshot } : undefined);
    await pglite.waitReady;
  }
  keepQueryStatements(pglite); // Prisma's statements parsed once too (before takeTurns, which wraps `query`)
  const activity = takeTurns(pglite); // a chain of statements no longer holds every request
  const conn = pgliteConnection(pglite);
  const prepared = preparedStatements(pglite);
  return {
    target,
    factory: new PrismaPGlite(pglite) as unknown as SqlMigrationAwareDriverAdapterFactory,
    // Its one connection runs one statement at a time (waiting for any open
    // transaction): a turn's reads share one statement, outside Prisma.
    pool: {
      query: async (sql, params) => {
        if (pglite.closed) return null;
        return await activity.inTurn(() => prepared(sql, params.map(toDriverValue), PGLITE_ROWS));
      },
      spare: () => 1,
    },
    withConnection: (fn) => fn(conn),
    activity,
    // An open PGlite keeps Node's event loop alive: scripts must close it.
    close: async () => {
      if (!pglite.closed) await pglite.close();
      if (dir) releaseEmbeddedDatabase(dir);
    },
  };
}

/** A PGlite instance as the migrator and the SQL-function tools talk to a database. */
export function pgliteConnection(pglite: import("@electric-sql/pglite").PGlite): SqlConnection {
  return {
    exec: async (sql) => void (await pglite.exec(sql)),
    query: async <T>(sql: string, params?: unknown[]) => (await pglite.query<T>(sql, params as never)).rows,
  };
}

/**
 * Values read outside Prisma as JSON would carry them: timestamps as text (the
 * caller knows its columns are UTC; node-postgres would read them in the
 * process's zone), 64-bit integers as numbers.
 */
function rowTypes(types: typeof import("pg").types): { getTypeParser: typeof types.getTypeParser } {
  return {
    getTypeParser: ((oid: number, format?: "text" | "binary") => {
      if (oid === types.builtins.TIMESTAMP || oid === types.builtins.TIMESTAMPTZ) return (v: string) => v;
      if (oid === types.builtins.INT8) return Number;
      return types.getTypeParser(oid, format);
    }) as typeof types.getTypeParser,
  };
}

/**
 * A parameter as Prisma would send it: node-postgres writes a Date in the
 * process's local zone, which a `timestamp` (UTC, without zone) would take
 * as is; ISO text in UTC is read right whatever the process's zone.
 */
function toDriverValue(v: unknown): unknown {
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(toDriverValue);
  return v;
}

/** As `rowTypes`, for PGlite: timestamps as text, 64-bit integers as numbers. */
const PGLITE_ROWS = { 1114: (v: string) => v, 1184: (v: string) => v, 20: Number };
