// The embedded database takes turns with the server's other work. PGlite runs each statement synchronously on this
// thread and its promise is already settled when it returns, so a chain of awaited statements (an answer's writes,
// a 10,000-message import's transaction, a burst of uploads) ran as one task: no request was read, no timer fired,
// until the chain ended. Measured on the production build: a health check waited 1.1 s behind one /v1 answer and
// 0.9 s behind an import. Each statement now first lets waiting I/O and timers run; a transaction still holds the
// one connection meanwhile, so other statements wait for it, but requests that need no database are answered.
// PostgreSQL needs none of this: its statements wait on the network.
import type { PGlite, QueryOptions, Transaction } from "@electric-sql/pglite";

/** One turn of the event loop: pending I/O callbacks and timers run before what follows. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What the embedded database did last, for a health check that need not queue behind its work. */
export type EmbeddedActivity = {
  /** When a statement last finished without error (performance.now()), or 0 before the first. */
  lastAnsweredAt(): number;
  /** Runs a statement sent outside `query` (lib/db/pglite-statements.ts) in its turn, as `query` runs. */
  inTurn<R>(run: () => Promise<R>): Promise<R>;
};

/** Makes every statement on `db`, and in each of its transactions, wait for the next turn before it starts. */
export function takeTurns(db: PGlite): EmbeddedActivity {
  let answeredAt = 0;
  const inTurn = async <R>(run: () => Promise<R>): Promise<R> => {
    await nextTurn();
    const result = await run();
    answeredAt = performance.now();
    return result;
  };
  const taking = <T extends Pick<Transaction, "query" | "exec">>(target: T): T => {
    const query = target.query.bind(target);
    const exec = target.exec.bind(target);
    target.query = <R>(sql: string, params?: unknown[], options?: QueryOptions) =>
      inTurn(() => query<R>(sql, params, options));
    target.exec = (sql, options) => inTurn(() => exec(sql, options));
    return target;
  };
  taking(db);
  const transaction = db.transaction.bind(db);
  db.transaction = async (fn) => {
    await nextTurn();
    return transaction((tx) => fn(taking(tx)));
  };
  return { lastAnsweredAt: () => answeredAt, inTurn };
}
