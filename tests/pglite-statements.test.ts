// The embedded database's hot statements are parsed once and kept (lib/db/pglite-statements.ts): what a caller gets
// must be what PGlite's own `query` gives, whatever happened to the statement meanwhile.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { keepQueryStatements, preparedStatements, type PreparedQuery } from "@/lib/db/pglite-statements";

const ROWS = { 1114: (v: string) => v, 20: Number };

describe("statements parsed once on the embedded database", () => {
  let db: PGlite;
  let run: PreparedQuery;
  const kept = async () =>
    (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements")).rows[0].n;

  beforeAll(async () => {
    db = new PGlite();
    await db.exec(`
      CREATE TABLE t (id int, at timestamp, tags text[], doc jsonb, big bigint, note text);
      INSERT INTO t VALUES (1, '2026-03-01 23:30:00.125', '{a,b}', '{"x": 1}', 9007199254740993, NULL);
      CREATE FUNCTION f(x int) RETURNS TABLE (a int) LANGUAGE sql AS $$ SELECT x $$;
    `);
    run = preparedStatements(db, 8);
  });
  afterAll(async () => db.close());

  it("gives the rows PGlite's query gives, for every kind of value, and parses a statement once", async () => {
    const sql = "SELECT * FROM t WHERE id = $1 AND tags && $2::text[] AND $3::jsonb ? 'k' AND ($4::text IS NULL)";
    const params = [1, ["a", "z"], JSON.stringify({ k: true }), null];
    const expected = (await db.query(sql, params, { parsers: ROWS })).rows;
    expect(expected).toHaveLength(1);
    const before = await kept();
    for (let i = 0; i < 5; i++) expect(await run(sql, params, ROWS)).toEqual(expected);
    expect(await kept()).toBe(before + 1);
    expect(await run(sql, [2, ["a"], "{}", null], ROWS)).toEqual([]);
  });

  it("reports a statement's error and stays usable", async () => {
    await expect(run("SELECT nope FROM t", [], ROWS)).rejects.toThrow(/nope/);
    await expect(run("SELECT 1 / $1::int AS q", [0], ROWS)).rejects.toThrow(/division by zero/);
    expect(await run("SELECT 1 / $1::int AS q", [1], ROWS)).toEqual([{ q: 1 }]);
    // The failed statements left no transaction open behind them.
    expect(db.isInTransaction()).toBe(false);
    await db.transaction(async (tx) => void (await tx.query("INSERT INTO t (id) VALUES (2)")));
    expect(await run("SELECT count(*)::int AS n FROM t", [], ROWS)).toEqual([{ n: 2 }]);
  });

  it("reads a changed function's new rows, and parses again a statement the engine dropped", async () => {
    const sql = "SELECT * FROM f($1)";
    expect(await run(sql, [3], ROWS)).toEqual([{ a: 3 }]);
    const before = await kept();
    await db.exec(`DROP FUNCTION f(int);
      CREATE FUNCTION f(x int) RETURNS TABLE (a int, b text) LANGUAGE sql AS $$ SELECT x, 'two' $$`);
    expect(await run(sql, [4], ROWS)).toEqual([{ a: 4, b: "two" }]);
    expect(await kept()).toBe(before); // the stale one was closed
    await db.exec("DEALLOCATE ALL");
    expect(await run(sql, [5], ROWS)).toEqual([{ a: 5, b: "two" }]);
  });

  it("keeps a bounded number of statements", async () => {
    for (let i = 0; i < 30; i++)
      expect(await run(`SELECT ${i} AS n, $1::int AS m`, [i], ROWS)).toEqual([{ n: i, m: i }]);
    expect(await kept()).toBe(8);
  });

  it("waits for a transaction that holds the connection, and writes what it is given", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // A transaction that will roll back: a statement run inside it would see its row.
    const tx = db.transaction(async (t) => {
      await t.query("INSERT INTO t (id) VALUES (10)");
      await held;
      throw new Error("rolled back");
    });
    await new Promise((r) => setTimeout(r, 10));
    const counted = run("SELECT count(*)::int AS n FROM t WHERE id = $1", [10], ROWS);
    await new Promise((r) => setTimeout(r, 10));
    release();
    await expect(tx).rejects.toThrow("rolled back");
    expect(await counted).toEqual([{ n: 0 }]);
    await run("INSERT INTO t (id, note) VALUES ($1, $2)", [11, "written"], ROWS);
    expect((await db.query("SELECT note FROM t WHERE id = 11")).rows).toEqual([{ note: "written" }]);
  });
});

describe("PGlite's query on kept statements, as Prisma's adapter calls it", () => {
  let db: PGlite;
  let plain: PGlite; // the same data, PGlite's own `query`: what every answer must equal
  const named = async () =>
    (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'mnemo_%'"))
      .rows[0].n;
  const setUp = `
    CREATE TABLE t (id int PRIMARY KEY, at timestamp(3), day date, doc jsonb, big bigint, raw bytea, note text);
    INSERT INTO t VALUES (1, '2026-03-01 23:30:00.125', '2026-03-01', '{"x": 1}', 9007199254740993, '\\x0102', NULL);`;

  beforeAll(async () => {
    [db, plain] = [new PGlite(), new PGlite()];
    await db.exec(setUp);
    await plain.exec(setUp);
    keepQueryStatements(db);
  });
  afterAll(async () => Promise.all([db.close(), plain.close()]));

  it("answers as PGlite's query does, rows, fields and counts, parsing each statement once", async () => {
    const parsers = { 1114: (v: string) => `at ${v}`, 20: (v: string) => `big ${v}` };
    const read = "SELECT * FROM t WHERE id = $1";
    const before = await named();
    for (const options of [{ rowMode: "array" as const, parsers }, { parsers }, undefined]) {
      const expected = await plain.query(read, [1], options);
      for (let i = 0; i < 3; i++) expect(await db.query(read, [1], options)).toMatchObject(expected);
    }
    expect(await named()).toBe(before + 1);
    const write = "UPDATE t SET note = $1 WHERE id >= $2";
    expect(await db.query(write, ["n", 1])).toMatchObject(await plain.query(write, ["n", 1]));
    expect((await db.query(write, ["n", 1])).affectedRows).toBe(1);
  });

  it("runs in a transaction on the transaction's connection, and an error there rolls it back", async () => {
    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO t (id, note) VALUES ($1, $2)", [2, "in tx"]);
      expect((await tx.query("SELECT note FROM t WHERE id = $1", [2])).rows).toEqual([{ note: "in tx" }]);
    });
    const failed = db.transaction(async (tx) => {
      await tx.query("INSERT INTO t (id, note) VALUES ($1, $2)", [3, "lost"]);
      await tx.query("INSERT INTO t (id) VALUES ($1)", [2]); // the key is taken
    });
    await expect(failed).rejects.toMatchObject({ code: "23505" });
    expect((await db.query("SELECT id FROM t ORDER BY id")).rows).toEqual([{ id: 1 }, { id: 2 }]);
    expect(db.isInTransaction()).toBe(false);
    let closed!: Transaction;
    await db.transaction(async (tx) => void (closed = tx));
    await expect(closed.query("SELECT 1")).rejects.toThrow(/closed/);
  });

  it("leaves an option it does not read to PGlite's own query", async () => {
    const r = await db.query("SELECT $1 AS v", ["7"], { paramTypes: [23] });
    expect(r.rows).toEqual([{ v: 7 }]);
  });
});
