// `npm run bench:statements`: what a Prisma statement costs the server's thread on the embedded database, with its
// statements kept (lib/db/pglite-statements.ts, keepQueryStatements) and through PGlite's own `query` (parsed and
// described every time, its 318 default parsers copied per result). Two migrated databases in one process, the same
// rows, the same calls in turn; prints the median and p95 of each call on each, and their ratio.
import { PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { pgliteConnection } from "../../lib/db/engine";
import { applyMigrations } from "../../lib/db/migrate";
import { keepQueryStatements } from "../../lib/db/pglite-statements";
import { PrismaClient } from "../../lib/generated/prisma/client";
import { percentile, round, table } from "./stats";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2000);

async function open(kept: boolean) {
  const pglite = new PGlite();
  await applyMigrations(pgliteConnection(pglite));
  if (kept) keepQueryStatements(pglite);
  const db = new PrismaClient({ adapter: new PrismaPGlite(pglite) as never });
  const user = await db.user.create({ data: { email: "bench@example.com" } });
  const thread = await db.thread.create({ data: { userId: user.id, title: "A thread" } });
  for (let i = 0; i < 200; i++)
    await db.memory.create({ data: { userId: user.id, text: `Memory number ${i}`, source: "manual" } });
  return { db, pglite, user, thread };
}

type Open = Awaited<ReturnType<typeof open>>;
/** Calls a turn and its jobs make, by their shape: a read by key, a filtered list, a write, a raw statement. */
const calls: Record<string, (o: Open, i: number) => Promise<unknown>> = {
  "user by id": ({ db, user }) => db.user.findUnique({ where: { id: user.id } }),
  "20 memories, filtered and sorted": ({ db, user }) =>
    db.memory.findMany({ where: { userId: user.id, status: "active" }, orderBy: { updatedAt: "desc" }, take: 20 }),
  "thread update": ({ db, thread }, i) => db.thread.update({ where: { id: thread.id }, data: { title: `T ${i}` } }),
  "raw count": ({ db, user }) => db.$queryRaw`SELECT count(*)::int AS n FROM "Memory" WHERE "userId" = ${user.id}`,
};

async function main() {
  const sides = { query: await open(false), kept: await open(true) };
  const times: Record<string, Record<keyof typeof sides, number[]>> = {};
  for (const name of Object.keys(calls)) times[name] = { query: [], kept: [] };
  for (let i = 0; i < ROUNDS; i++)
    for (const [name, call] of Object.entries(calls))
      for (const side of i % 2 ? (["kept", "query"] as const) : (["query", "kept"] as const)) {
        const t = performance.now();
        await call(sides[side], i);
        times[name][side].push(performance.now() - t);
      }
  const rows = Object.entries(times).map(([call, t]) => ({
    call,
    query_p50_ms: round(percentile(t.query, 50), 3),
    query_p95_ms: round(percentile(t.query, 95), 3),
    kept_p50_ms: round(percentile(t.kept, 50), 3),
    kept_p95_ms: round(percentile(t.kept, 95), 3),
    ratio_p50: round(percentile(t.kept, 50) / percentile(t.query, 50), 2),
  }));
  console.log(`Prisma on PGlite, ${ROUNDS} rounds of each call, kept statements against PGlite's query`);
  console.log(table(rows));
  console.log(JSON.stringify(rows));
  for (const s of Object.values(sides)) {
    await s.db.$disconnect();
    await s.pglite.close();
  }
}

void main();
