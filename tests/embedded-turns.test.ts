// The embedded database runs statements on the server's own thread: a long chain of them must still let other
// requests in (lib/db/embedded-turns.ts), and the health check must not queue behind a transaction.
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDatabase } from "@/lib/db/client";
import { GET as health } from "@/app/api/health/route";

const embedded = (await getDatabase()).database.target.kind === "pglite";

/** How many times a 1 ms timer fired while `work` ran. */
async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

describe.runIf(embedded)("the embedded database takes turns with other work", () => {
  afterAll(async () => closeDb());

  it("lets timers and I/O run between the statements of a long chain, in a transaction or not", async () => {
    const { prisma } = await getDatabase();
    const chain = async (q: (n: number) => Promise<unknown>) => {
      const started = performance.now();
      for (let i = 0; i < 400; i++) await q(i);
      return performance.now() - started;
    };
    const alone = await ticksDuring(() => chain((n) => prisma.$queryRaw`SELECT ${n}::int AS n`));
    expect(alone).toBeGreaterThan(0);
    const inTransaction = await ticksDuring(() =>
      prisma.$transaction(async (tx) => chain((n) => tx.$queryRaw`SELECT ${n}::int AS n`)),
    );
    expect(inTransaction).toBeGreaterThan(0);
  });

  it("answers the health check while a transaction holds the one connection", async () => {
    const { prisma } = await getDatabase();
    let release!: () => void;
    let held = true;
    const holding = prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT 1`;
      await new Promise<void>((r) => (release = r));
      held = false;
    });
    while (!release) await new Promise((r) => setTimeout(r, 5));
    const res = await health();
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
    expect(held).toBe(true); // answered before the transaction let go
    release();
    await holding;
  });
});
