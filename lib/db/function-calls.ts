// Calls of the app's set-returning SQL functions (the hot path's reads:
// history window, memory profile, memory and passage search, recent
// exchanges). Inside `readTogether` (a turn wraps its concurrent reads in it),
// the calls made in the same tick travel as ONE statement: each function's
// rows come back as one JSON column. A turn then costs one round trip and one
// pooled connection instead of five: on PostgreSQL each round trip is a socket
// write and a wake-up of the server process, on PGlite a pass through its
// single-threaded engine, and the client's per-query work is paid once
// (DataLoader does the batching). Batches never span requests: one user's
// reads never wait behind, or fail with, another's, and concurrent turns still
// spread over the pool. On PostgreSQL the statement goes to Prisma's pool
// through node-postgres directly (a transaction's calls stay on Prisma, on the
// transaction's connection).
import { AsyncLocalStorage } from "node:async_hooks";
import DataLoader from "dataloader";
import type { Db } from "./client";
import type { PooledQuery } from "./engine";
import { markUnavailable } from "@/lib/errors";

export type FunctionCall = {
  /** A call of a function returning rows (a table or row type), $1…$n placeholders: `mnemo_recent_exchanges($1, $2::int)`. */
  call: string;
  params: unknown[];
  /** Columns holding timestamps (JSON carries them as text without a zone: the database stores UTC). */
  dates?: readonly string[];
};

type Row = Record<string, unknown>;

type Loaders = Map<Db, DataLoader<FunctionCall, Row[]>>;
const scope = new AsyncLocalStorage<Loaders>();

/** Runs `fn` so that the function calls it makes in the same tick share one statement. */
export function readTogether<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run(new Map(), fn);
}

/** The rows of one function call: batched with the calls made in the same tick in the same `readTogether`. */
export async function callFunction<T>(db: Db, fc: FunctionCall): Promise<T[]> {
  const loaders = scope.getStore();
  if (!loaders) return (await runTogether(db, [fc]))[0] as T[];
  let loader = loaders.get(db);
  if (!loader) {
    // A transaction is its own client: its calls are never mixed with others'.
    loader = new DataLoader((calls) => runTogether(db, calls), { cache: false, maxBatchSize: MAX_CALLS });
    loaders.set(db, loader);
  }
  return loader.load(fc) as Promise<T[]>;
}

/** Enough for a turn's reads; more calls go in further statements. */
const MAX_CALLS = 16;

/** Root clients whose reads may skip Prisma (registered by lib/db/prisma.ts); transaction clients never are. */
const pooled = new WeakMap<Db, PooledQuery>();

export function readThroughPool(db: Db, query: PooledQuery): void {
  pooled.set(db, query);
}

async function runTogether(db: Db, calls: readonly FunctionCall[]): Promise<Row[][]> {
  const params: unknown[] = [];
  const columns = calls.map((fc, i) => {
    const offset = params.length;
    params.push(...fc.params);
    const call = fc.call.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    // WITH ORDINALITY keeps each function's own row order through the aggregate.
    return `(SELECT COALESCE(json_agg(r ORDER BY r.ordinality), '[]')::text FROM ${call} WITH ORDINALITY r) AS c${i}`;
  });
  const sql = `SELECT ${columns.join(", ")}`;
  const direct = pooled.get(db);
  const rows = direct ? await direct(sql, params).catch(markUnavailable) : null;
  const [row] = (rows ?? (await db.$queryRawUnsafe(sql, ...params))) as Array<Record<string, string>>;
  return calls.map((fc, i) => decodeRows(JSON.parse(row[`c${i}`]) as Row[], fc.dates ?? []));
}

/** A timestamp with a zone (timestamptz columns: "…+00:00"); ours are UTC without one. */
const ZONED = /(Z|[+-]\d\d:\d\d)$/;

function decodeRows(rows: Row[], dates: readonly string[]): Row[] {
  for (const r of rows) {
    delete r.ordinality;
    for (const d of dates) if (typeof r[d] === "string") r[d] = new Date(ZONED.test(r[d]) ? r[d] : `${r[d]}Z`);
  }
  return rows;
}
