// Calls of the app's set-returning SQL functions (the hot path's reads:
// history window, memory profile, memory and passage search, recent
// exchanges). Inside `readTogether` (a turn wraps its concurrent reads in it),
// the calls made in the same tick are gathered (DataLoader); in a statement
// they share, each function's rows come back as one JSON column.
// The root client sends them straight to the driver (Prisma's per-query work
// skipped; a transaction's calls stay on Prisma, on its connection):
// - on PGlite as ONE statement: one pass through its single-threaded engine
//   (five statements cost more there than the JSON);
// - on PostgreSQL spread over as many statements as the pool has spare
//   connections, so the server runs them in parallel (one statement runs its
//   functions one after another on one core); under load, with no connection
//   spare, they share one statement and connection.
// A call alone in its statement returns its rows as they are, without JSON.
// Batches never span requests: one user's reads never wait behind, or fail
// with, another's.
import { AsyncLocalStorage } from "node:async_hooks";
import DataLoader from "dataloader";
import type { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "./types";
import type { DirectPool } from "./engine";
import { markUnavailable } from "@/lib/errors";

export type FunctionCall = {
  /**
   * A call of a function returning rows (a table or row type), $1…$n placeholders:
   * `mnemo_recent_exchanges($1, $2::int)`.
   */
  call: string;
  params: unknown[];
  /** Columns holding timestamps (JSON carries them as text without a zone: the database stores UTC). */
  dates?: readonly string[];
};

type Row = Record<string, unknown>;

type Together = { loaders: Map<Db, DataLoader<FunctionCall, Row[]>>; hold?: Promise<unknown> };
const scope = new AsyncLocalStorage<Together>();

/** Runs `fn` so that the function calls it makes in the same tick share one statement. */
export function readTogether<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run({ loaders: new Map() }, fn);
}

/**
 * `readTogether`, with the first statement sent only once `hold` has settled, with every call made by then: the calls
 * are prepared while it is awaited (a turn's reads while the question's vector is made, which pgvector's search needs),
 * and the search made when it comes joins them.
 */
export function readTogetherAfter<T>(hold: Promise<unknown> | undefined, fn: () => Promise<T>): Promise<T> {
  return scope.run({ loaders: new Map(), hold }, fn);
}

/** A batch goes out after the calls made in the same tick (DataLoader's own rule), and not before `hold` settles. */
const scheduleAfter = (hold: Promise<unknown>) => (dispatch: () => void) => {
  const go = () => process.nextTick(dispatch);
  void hold.then(go, go);
};

/** The rows of one function call: batched with the calls made in the same tick in the same `readTogether`. */
export async function callFunction<T>(db: Db, fc: FunctionCall): Promise<T[]> {
  const together = scope.getStore();
  if (!together) {
    const [rows] = await runTogether(db, [fc]);
    if (rows instanceof Error) throw rows;
    return rows as T[];
  }
  const { loaders, hold } = together;
  let loader = loaders.get(db);
  if (!loader) {
    // A transaction is its own client: its calls are never mixed with others'.
    loader = new DataLoader((calls) => runTogether(db, calls), {
      cache: false,
      maxBatchSize: MAX_CALLS,
      ...(hold && { batchScheduleFn: scheduleAfter(hold) }),
    });
    loaders.set(db, loader);
  }
  return loader.load(fc) as Promise<T[]>;
}

/** Enough for a turn's reads; more calls go in further batches. */
const MAX_CALLS = 16;

/** Root clients whose reads may skip Prisma (registered by lib/db/prisma.ts); transaction clients never are. */
const pooled = new WeakMap<Db, DirectPool>();

export function readThroughPool(db: Db, pool: DirectPool): void {
  pooled.set(db, pool);
}

/**
 * A statement of the hot path (a turn's append) sent as the reads are: on a root client straight to the driver (on
 * PGlite parsed once, lib/db/pglite-statements.ts), in a transaction through Prisma on its connection. `dates`: the
 * timestamp columns, read as UTC whichever way the rows came.
 */
export async function directRows<T>(db: Db, sql: Prisma.Sql, dates: readonly string[] = []): Promise<T[]> {
  const pool = pooled.get(db);
  const rows = pool ? await pool.query(sql.text, sql.values).catch(markUnavailable) : null;
  return decodeRows((rows ?? (await db.$queryRaw<Row[]>(sql))) as Row[], dates) as T[];
}

/** Each call's rows, or its error (DataLoader rejects only that call). */
async function runTogether(db: Db, calls: readonly FunctionCall[]): Promise<Array<Row[] | Error>> {
  const pool = pooled.get(db);
  const ways = pool ? Math.min(calls.length, pool.spare()) : 1;
  if (!pool || ways <= 1) return runStatement(db, pool, calls);
  // Calls dealt round-robin over `ways` statements, run concurrently.
  const groups = Array.from({ length: ways }, (_, w) => calls.map((_, i) => i).filter((i) => i % ways === w));
  const results: Array<Row[] | Error> = [];
  await Promise.all(
    groups.map(async (group) => {
      const rows = await runStatement(
        db,
        pool,
        group.map((i) => calls[i]),
      );
      group.forEach((i, k) => (results[i] = rows[k]));
    }),
  );
  return results;
}

/** Calls in one statement: all get their rows, or all get the statement's error. */
async function runStatement(
  db: Db,
  pool: DirectPool | undefined,
  calls: readonly FunctionCall[],
): Promise<Array<Row[] | Error>> {
  try {
    if (pool && calls.length === 1) {
      // A call alone on the pool: its rows as they are, with no JSON to build and parse (~0.9 ms of server time).
      const [fc] = calls;
      const rows = await pool.query(`SELECT * FROM ${fc.call}`, fc.params).catch(markUnavailable);
      if (rows) return [decodeRows(rows, fc.dates ?? [])];
    }
    return await runAsJson(db, pool, calls);
  } catch (e) {
    return calls.map(() => (e instanceof Error ? e : new Error(String(e))));
  }
}

/** Each call's rows as one JSON column of one statement. */
async function runAsJson(db: Db, pool: DirectPool | undefined, calls: readonly FunctionCall[]): Promise<Row[][]> {
  const params: unknown[] = [];
  const columns = calls.map((fc, i) => {
    const offset = params.length;
    params.push(...fc.params);
    const call = fc.call.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    // WITH ORDINALITY keeps each function's own row order through the aggregate.
    return `(SELECT COALESCE(json_agg(r ORDER BY r.ordinality), '[]')::text FROM ${call} WITH ORDINALITY r) AS c${i}`;
  });
  const sql = `SELECT ${columns.join(", ")}`;
  const rows = pool ? await pool.query(sql, params).catch(markUnavailable) : null;
  const [row] = (rows ?? (await db.$queryRawUnsafe(sql, ...params))) as Array<Record<string, string>>;
  return calls.map((fc, i) => decodeRows(JSON.parse(row[`c${i}`]) as Row[], fc.dates ?? []));
}

/** A timestamp with a zone (timestamptz: "…+00:00" in JSON, "…+00" as text); ours are UTC without one. */
const ZONED = /(Z|[+-]\d\d(:?\d\d)?)$/;

/** Timestamps as JSON ("2026-03-01T23:30:00.125") or text ("2026-03-01 23:30:00.125") carry them. */
function decodeRows(rows: Row[], dates: readonly string[]): Row[] {
  for (const r of rows) {
    delete r.ordinality;
    for (const d of dates) {
      const v = r[d];
      if (typeof v === "string") r[d] = new Date(`${v.replace(" ", "T")}${ZONED.test(v) ? "" : "Z"}`);
    }
  }
  return rows;
}
