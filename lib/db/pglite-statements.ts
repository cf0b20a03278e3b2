// The embedded database's hot statements, parsed once. PGlite's `query` sends every statement through Parse and
// Describe before it binds it: for a turn's append and batched reads that was 0.8–1.8 ms each of the server's one
// thread, measured (the append's CTE the most). Here a statement is parsed into a named prepared statement the first
// time it is seen, its parameter types kept, and each later call only binds and executes it, in one message to the
// engine. PostgreSQL keeps replanning what a schema change touches, so a kept statement stays right after a
// migration; one the engine no longer knows (its result type changed, or it was deallocated) is parsed again.
import { parse, protocol, type PGlite, type ParserOptions } from "@electric-sql/pglite";

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

/** Runs statements on `db` as named prepared statements, each parsed once (see above); at most `max` kept. */
export function preparedStatements(db: PGlite, max = MAX_STATEMENTS): PreparedQuery {
  const kept = new Map<string, Kept>(); // in use order: the first is the least recently used
  let counter = 0;
  const run = (messages: Uint8Array) => db.execProtocolStream(messages, { syncToFs: false });

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

  async function execute(sql: string, values: unknown[], parsers: ParserOptions) {
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
    return parseResults(messages, db.parsers, { parsers }).at(-1)?.rows as Record<string, unknown>[];
  }

  return (sql, values, parsers) =>
    // As `query` does: after any open transaction, one statement at a time, then the files written out.
    db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        try {
          return await execute(sql, values, parsers);
        } catch (e) {
          await run(serialize.sync()); // a failed parse was not followed by one
          if (!STALE.has((e as { code?: string }).code ?? "")) throw e;
          const stale = kept.get(sql);
          kept.delete(sql);
          if (stale) await run(concat([serialize.close({ type: "S", name: stale.name }), serialize.sync()]));
          return await execute(sql, values, parsers);
        } finally {
          if (!db.isInTransaction()) await db.syncToFs();
        }
      }),
    );
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
