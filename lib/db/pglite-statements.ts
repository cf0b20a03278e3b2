// The embedded database's hot statements, parsed once. PGlite's `query` sends every statement through Parse and
// Describe before it binds it: for a turn's append and batched reads that was 0.8–1.8 ms each of the server's one
// thread, measured (the append's CTE the most). Here a statement is parsed into a named prepared statement the first
// time it is seen, its parameter types kept, and each later call only binds and executes it, in one message to the
// engine. PostgreSQL keeps replanning what a schema change touches, so a kept statement stays right after a
// migration; one the engine no longer knows (its result type changed, or it was deallocated) is parsed again.
import {
  parse,
  protocol,
  type PGlite,
  type ParserOptions,
  type QueryOptions,
  type Results,
} from "@electric-sql/pglite";

const { serialize } = protocol;
const { parseDescribeStatementResults, parseResults } = parse;

/** Statements kept per database: a turn's batches come in a few dozen shapes; past this the oldest is closed. */
const MAX_STATEMENTS = 256;

/** PostgreSQL's codes for a kept statement that must be parsed again: result type changed; statement unknown. */
const STALE = new Set(["0A000", "26000"]);

type Kept = { name: string; types: number[] };

export type PreparedQuery = (
  sql: string,
  values: unknown[],
  parsers: ParserOptions,
) => Promise<Record<string, unknown>[]>;

/** What a kept statement's result is read with: `query`'s options, those `query` takes that this path can honour. */
type ReadOptions = Pick<QueryOptions, "rowMode" | "parsers">;

type KeptStatements = {
  /** Runs `sql` on its kept statement; `inTransaction`: inside a transaction the caller holds (no wait for it). */
  run(sql: string, values: unknown[], options: ReadOptions, inTransaction: boolean): Promise<Results>;
};

/** One set of kept statements per database: their names must not collide, and one bound holds for all callers. */
const stores = new WeakMap<PGlite, KeptStatements>();

/** Runs statements on `db` as named prepared statements, each parsed once (see above); at most `max` kept. */
export function preparedStatements(db: PGlite, max = MAX_STATEMENTS): PreparedQuery {
  const kept = keptStatements(db, max);
  return async (sql, values, parsers) =>
    (await kept.run(sql, values, { parsers }, false)).rows as Record<string, unknown>[];
}

/**
 * `query` on `db` and in each of its transactions runs on kept statements too, as Prisma's adapter calls it
 * (`rowMode` and `parsers` only; any other option goes to PGlite's own `query`). PGlite's `query` parses and describes
 * every statement anew and, given parsers, copies its 318 default ones into a new object for each result: measured
 * 230 µs for a one-row read by id against 85 µs here, and the app sends a few dozen statements per turn.
 */
export function keepQueryStatements(db: PGlite): void {
  const kept = keptStatements(db, MAX_STATEMENTS);
  const honoured = (o?: QueryOptions): o is ReadOptions | undefined =>
    !o || Object.keys(o).every((k) => k === "rowMode" || k === "parsers");
  const query = db.query.bind(db);
  db.query = (<T>(sql: string, params?: unknown[], options?: QueryOptions) =>
    honoured(options)
      ? kept.run(sql, params ?? [], options ?? {}, false)
      : query<T>(sql, params, options)) as PGlite["query"];
  const transaction = db.transaction.bind(db);
  db.transaction = (fn) =>
    transaction((tx) => {
      const txQuery = tx.query.bind(tx);
      tx.query = (<T>(sql: string, params?: unknown[], options?: QueryOptions) => {
        if (!honoured(options)) return txQuery<T>(sql, params, options);
        if (tx.closed) return Promise.reject(new Error("Transaction is closed"));
        return kept.run(sql, params ?? [], options ?? {}, true);
      }) as typeof tx.query;
      return fn(tx);
    });
}

function keptStatements(db: PGlite, max: number): KeptStatements {
  let store = stores.get(db);
  if (!store) stores.set(db, (store = newKeptStatements(db, max)));
  return store;
}

function newKeptStatements(db: PGlite, max: number): KeptStatements {
  const kept = new Map<string, Kept>(); // in use order: the first is the least recently used
  let counter = 0;
  const run = (messages: Uint8Array) => db.execProtocolStream(messages, { syncToFs: false });
  // A caller's parsers over the defaults, merged once: PGlite's parseResults merges them again for every result.
  const merged = new WeakMap<ParserOptions, typeof db.parsers>();
  const parsersFor = (own?: ParserOptions): typeof db.parsers => {
    if (!own) return db.parsers;
    let all = merged.get(own);
    if (!all) merged.set(own, (all = { ...db.parsers, ...own }));
    return all;
  };

  async function prepare(sql: string): Promise<Kept> {
    const name = `mnemo_s${++counter}`;
    const described = await run(
      concat([serialize.parse({ name, text: sql }), serialize.describe({ type: "S", name })]),
    );
    const k = { name, types: parseDescribeStatementResults(described) };
    kept.set(sql, k);
    if (kept.size > max) {
      const [oldest, { name: closing }] = kept.entries().next().value!;
      kept.delete(oldest);
      await run(serialize.close({ type: "S", name: closing }));
    }
    return k;
  }

  async function execute(sql: string, values: unknown[], options: ReadOptions): Promise<Results> {
    let k = kept.get(sql);
    if (k) {
      kept.delete(sql); // to the back of the use order
      kept.set(sql, k);
    } else k = await prepare(sql);
    const bound = values.map((v, i) => (v === null || v === undefined ? null : serializeValue(db, v, k.types[i])));
    // One message to the engine: bind, describe, execute and sync (after an error it skips to the sync).
    const messages = await run(
      concat([
        serialize.bind({ statement: k.name, values: bound }),
        serialize.describe({ type: "P" }),
        serialize.execute({}),
        serialize.sync(),
      ]),
    );
    const read = options.rowMode ? { rowMode: options.rowMode } : undefined;
    return parseResults(messages, parsersFor(options.parsers), read)[0];
  }

  /** Runs it; a statement the engine no longer knows as kept is parsed again, once. */
  async function executeFresh(sql: string, values: unknown[], options: ReadOptions, retry: boolean) {
    try {
      return await execute(sql, values, options);
    } catch (e) {
      await run(serialize.sync()); // a failed parse was not followed by one
      if (!retry || !STALE.has((e as { code?: string }).code ?? "")) throw e;
      const stale = kept.get(sql);
      kept.delete(sql);
      if (stale) await run(concat([serialize.close({ type: "S", name: stale.name }), serialize.sync()]));
      return await execute(sql, values, options);
    }
  }

  return {
    run: (sql, values, options, inTransaction) =>
      inTransaction
        ? // Its transaction holds the connection; an error has aborted it, so a stale statement is not retried.
          db._runExclusiveQuery(() => executeFresh(sql, values, options, false))
        : // As `query` does: after any open transaction, one statement at a time, then the files written out.
          db._runExclusiveTransaction(() =>
            db._runExclusiveQuery(async () => {
              try {
                return await executeFresh(sql, values, options, true);
              } finally {
                if (!db.isInTransaction()) await db.syncToFs();
              }
            }),
          ),
  };
}

/** A parameter as PGlite's `query` writes it: by its type's serializer, else as text. */
function serializeValue(db: PGlite, v: unknown, type: number | undefined): string {
  const write = type === undefined ? undefined : db.serializers[type];
  return write ? write(v) : String(v);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
