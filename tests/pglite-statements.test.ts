// The embedded database's hot statements are parsed once and kept (lib/db/pglite-statements.ts): what a caller gets
// must be what PGlite's own `query` gives, whatever happened to the statement meanwhile.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PGlite } from "@electric-sql/pglite";
import { preparedStatements, type PreparedQuery } from "@/lib/db/pglite-statements";

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
