// The hot path's SQL function calls: made together in one readTogether they
// travel as one statement, and each caller still gets its own rows, in order,
// with timestamps as dates; separate requests are never batched together; a
// failing call fails only its statement, and a transaction's calls run in
// that transaction. The root client's reads skip Prisma (straight to the
// driver) and, on PostgreSQL, spread over the connections the pool has to
// spare: dates still mean the same instants in any process time zone, a call
// read alone gives the same values as one in a shared (JSON) statement, and
// an unreachable database is still reported as such.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { callFunction, readTogether, readTogetherAfter } from "@/lib/db/function-calls";
import type { Db } from "@/lib/db/client";
import { openDatabase } from "@/lib/db/engine";
import { newPrismaClient } from "@/lib/db/prisma";
import { DATABASE_DOWN_DIGEST } from "@/lib/errors";

describe.each(engines)("SQL function calls on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  /** A client that counts the statements it sends. */
  function counting(): { db: Db; statements: () => number } {
    let n = 0;
    const db = t.db.$extends({
      query: {
        $allOperations: ({ args, query }) => {
          n++;
          return query(args);
        },
      },
    }) as unknown as Db;
    return { db, statements: () => n };
  }

  // A row-returning function for the tests: rows given as JSON come back as recall's passage rows.
  type PassageRow = { hit: string; hitPosition: number; hitAt: Date | null; content: string | null };
  const rowsOf = (rows: Array<Partial<PassageRow>>) => ({
    call: "json_populate_recordset(NULL::mnemo_passage_row, $1::json)",
    params: [JSON.stringify(rows)],
    dates: ["hitAt"],
  });

  it("calls made together travel in one statement and each gets its own rows in order", async () => {
    const { db, statements } = counting();
    const many = Array.from({ length: 50 }, (_, i) => ({ hit: `h${50 - i}`, hitPosition: 50 - i }));
    const tricky = [
      { hit: "b", content: 'it\'s "quoted"\n<and> \\ 🙂' },
      { hit: "a", content: null },
    ];
    const [first, second, none] = await readTogether(() =>
      Promise.all([
        callFunction<PassageRow>(db, rowsOf(many)),
        callFunction<PassageRow>(db, rowsOf(tricky)),
        callFunction<PassageRow>(db, rowsOf([])),
      ]),
    );
    expect(statements()).toBe(1);
    // The second call's $1 was renumbered after the first's.
    expect(first.map((r) => [r.hit, r.hitPosition])).toEqual(many.map((r) => [r.hit, r.hitPosition]));
    expect(second.map((r) => [r.hit, r.content])).toEqual(tricky.map((r) => [r.hit, r.content]));
    expect(none).toEqual([]);
    // A call made after they finished is a statement of its own.
    await callFunction(db, rowsOf(tricky));
    expect(statements()).toBe(2);
  });

  it("held, calls made before the hold settles and as it settles travel in one statement, sent only then", async () => {
    const { db, statements } = counting();
    let settle!: (v: string) => void;
    const hold = new Promise<string>((resolve) => (settle = resolve));
    const done = readTogetherAfter(hold, () =>
      Promise.all([
        callFunction<PassageRow>(db, rowsOf([{ hit: "now" }])),
        // As pgvector's search waits for the question's vector: its call is made when the hold gives it.
        hold.then((hit) => callFunction<PassageRow>(db, rowsOf([{ hit }]))),
      ]),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statements()).toBe(0);
    settle("later");
    const [now, later] = await done;
    expect(statements()).toBe(1);
    expect([now[0].hit, later[0].hit]).toEqual(["now", "later"]);
    // A hold that fails still lets the calls go.
    const failed = Promise.reject(new Error("no vector"));
    const [alone] = await readTogetherAfter(failed, () =>
      Promise.all([callFunction<PassageRow>(db, rowsOf([{ hit: "x" }]))]),
    );
    expect(alone[0].hit).toBe("x");
    // Without a hold, the call made later is a statement of its own.
    await readTogether(() =>
      Promise.all([
        callFunction<PassageRow>(db, rowsOf([{ hit: "a" }])),
        Promise.resolve()
          .then(() => new Promise((r) => setTimeout(r, 5)))
          .then(() => callFunction(db, rowsOf([]))),
      ]),
    );
    expect(statements()).toBe(4);
  });

  it("two requests' calls are never batched together, even in the same tick", async () => {
    const { db, statements } = counting();
    const request = (hit: string) =>
      readTogether(() =>
        Promise.all([
          callFunction<PassageRow>(db, rowsOf([{ hit }])),
          callFunction<PassageRow>(db, rowsOf([{ hit: `${hit}2` }])),
        ]),
      );
    const [a, b] = await Promise.all([request("a"), request("b")]);
    expect(statements()).toBe(2);
    expect([a, b].map((r) => r.flat().map((x) => x.hit))).toEqual([
      ["a", "a2"],
      ["b", "b2"],
    ]);
    // Outside readTogether each call is a statement of its own.
    await Promise.all([callFunction(db, rowsOf([{ hit: "c" }])), callFunction(db, rowsOf([{ hit: "d" }]))]);
    expect(statements()).toBe(4);
  });

  it("timestamps come back as the same instants", async () => {
    const [row] = await callFunction<PassageRow>(
      t.db,
      rowsOf([{ hit: "x", hitAt: "2026-03-01T23:30:00.125" as unknown as Date }]),
    );
    expect(row.hitAt).toEqual(new Date("2026-03-01T23:30:00.125Z"));
    const [none] = await callFunction<PassageRow>(t.db, rowsOf([{ hit: "y" }]));
    expect(none.hitAt).toBeNull();
  });

  it("a failing call rejects the calls that shared its statement only, and later calls work", async () => {
    const results = await readTogether(() =>
      Promise.allSettled([
        callFunction(t.db, rowsOf([{ hit: "fine" }])),
        callFunction(t.db, {
          call: "json_populate_recordset(NULL::mnemo_passage_row, $1::json)",
          params: ["not json"],
        }),
      ]),
    );
    // On PostgreSQL, with connections to spare, each call had a statement of its own.
    expect(results.map((r) => r.status)).toEqual(
      engine === "postgres" ? ["fulfilled", "rejected"] : ["rejected", "rejected"],
    );
    const rows = await callFunction<PassageRow>(t.db, rowsOf([{ hit: "again" }]));
    expect(rows.map((r) => r.hit)).toEqual(["again"]);
  });

  it("a transaction's calls run inside it", async () => {
    const user = await t.db.user.create({ data: { email: `calls-${engine}@example.com` } });
    const seen = await t.db.$transaction(async (tx) => {
      const thread = await tx.thread.create({ data: { userId: user.id, title: "not committed yet" } });
      const rows = await callFunction<{ id: string }>(tx as unknown as Db, {
        call: "mnemo_searchable_threads($1, NULL, $2::timestamp, NULL, true)",
        params: [user.id, new Date(0)],
      });
      return { thread: thread.id, rows: rows.map((r) => r.id) };
    });
    expect(seen.rows).toEqual([seen.thread]);
  });

  it("a call read alone gives the same values as one read in a shared statement", async () => {
    const rows = [
      { hit: "a", hitPosition: 3, hitAt: "2026-03-01T23:30:00", rank: 1.25, content: 'it\'s "quoted"\n<and> \\ 🙂' },
      { hit: "b", hitPosition: -1, hitAt: "2026-03-02T00:00:00.5", rank: 0, content: null },
    ] as unknown as PassageRow[];
    const alone = await callFunction<PassageRow>(t.db, rowsOf(rows));
    const shared = await callFunction<PassageRow>(counting().db, rowsOf(rows)); // through Prisma: always JSON
    expect(alone).toEqual(shared);
    expect(alone[0]).toMatchObject({ hitPosition: 3, rank: 1.25, hitAt: new Date("2026-03-01T23:30:00Z") });
  });

  it("date parameters mean the same instants whatever the process's time zone", async () => {
    const zone = process.env.TZ;
    process.env.TZ = "America/Sao_Paulo"; // UTC-3: a date written in local time would shift by three hours
    try {
      const at = new Date("2026-03-01T23:30:00.125Z");
      const rows = await readTogether(() =>
        callFunction<PassageRow>(t.db, {
          call: `json_populate_recordset(NULL::mnemo_passage_row, json_build_array(
            json_build_object('hit', 'x', 'hitAt', $1::timestamp),
            json_build_object('hit', 'y', 'hitAt', ($2::timestamp[])[1])))`,
          params: [at, [at]],
          dates: ["hitAt"],
        }),
      );
      expect(rows.map((r) => r.hitAt)).toEqual([at, at]);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it.runIf(engine === "postgres")(
    "an unreachable database is reported as such, and a closed client's calls still work",
    async () => {
      const dead = await openDatabase({ kind: "postgres", url: "postgresql://postgres@127.0.0.1:1/none" });
      const db = newPrismaClient(dead.factory, dead.pool);
      const error = await callFunction(db, rowsOf([{ hit: "x" }])).catch((e: unknown) => e);
      expect((error as { digest?: string }).digest).toBe(DATABASE_DOWN_DIGEST);
      await dead.close();

      const other = await t.newClient();
      await other.db.user.count();
      await other.db.$disconnect(); // ends its pool; Prisma reconnects on its own
      const rows = await callFunction<PassageRow>(other.db, rowsOf([{ hit: "after" }]));
      expect(rows.map((r) => r.hit)).toEqual(["after"]);
      await other.close();
    },
  );

  it.runIf(engine === "postgres")(
    "calls made together run in parallel on spare connections, else share one",
    async () => {
      // Each call reports the server process and the statement (its start time) that ran it.
      const backend = {
        call: `json_populate_recordset(NULL::mnemo_passage_row, json_build_array(
        json_build_object('hit', pg_backend_pid()::text, 'content', statement_timestamp()::text)))`,
        params: [],
      };
      const backends = async (db: Db) => {
        const rows = await readTogether(() => Promise.all([1, 2, 3].map(() => callFunction<PassageRow>(db, backend))));
        const distinct = (f: (r: PassageRow) => unknown) => new Set(rows.map(([r]) => f(r))).size;
        return { processes: distinct((r) => r.hit), statements: distinct((r) => r.content) };
      };
      expect(await backends(t.db)).toEqual({ processes: 3, statements: 3 });

      const size = process.env.DATABASE_POOL_SIZE;
      process.env.DATABASE_POOL_SIZE = "2";
      const small = await t.newClient();
      if (size === undefined) delete process.env.DATABASE_POOL_SIZE;
      else process.env.DATABASE_POOL_SIZE = size;
      try {
        expect(await backends(small.db)).toEqual({ processes: 2, statements: 2 }); // three calls over two connections
        // A turn already holding a connection: the other's three calls share the one left.
        const sleep = `json_populate_recordset(NULL::mnemo_passage_row, json_build_array(json_build_object('hit', pg_sleep(0.3)::text)))`;
        const held = readTogether(() => callFunction(small.db, { call: sleep, params: [] }));
        await new Promise((r) => setTimeout(r, 50));
        expect(await backends(small.db)).toEqual({ processes: 1, statements: 1 });
        await held;
      } finally {
        await small.close();
      }
    },
  );
});
