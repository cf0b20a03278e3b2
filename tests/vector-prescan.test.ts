// The exact search's scan started in the encoder's worker with the question (lib/memory/kept-vectors.ts,
// startPrescan): it ranks the kept message vectors as they were when it started, the turn's first read changes some,
// and the merge must give exactly what a scan after that read gives, or nothing (then the server scans).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext } from "@/lib/user-context";
import { createThread } from "@/lib/chat/threads";
import { PrismaSession } from "@/lib/memory/session";
import { mergePrescan, messageVectors, startPrescan } from "@/lib/memory/kept-vectors";
import * as scores from "@/lib/memory/vector-scores";
import { scanSlots, topK, type SlotScores } from "@/lib/memory/vector-scores";
import { BUILTIN_EMBEDDING_MODEL, embedBuiltin } from "@/lib/llm/builtin-embedder";

const K = 5;
/** A vector of `dims` numbers, the same for the same seed. */
const vec = (seed: number, dims: number) =>
  Array.from({ length: dims }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
/** The worker's half, run here with the same function the worker evaluates. */
const workerScan = (q: number[], request: Parameters<typeof scanSlots>[2]) => scanSlots(scores, q, request);

describe.each(engines)("a scan of kept vectors started before the turn's read, on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(() => t.close());

  /** A user with `n` earlier messages with vectors of `model`, and the thread being answered. */
  async function userWithVectors(name: string, n: number, model: string, dims: number) {
    const user = (await t.db.user.create({ data: { email: `${name}-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    const earlier = await createThread(u, {});
    const current = await createThread(u, {});
    const items = await new PrismaSession(t.db, earlier.id, u.cipher).addItems(
      Array.from({ length: n }, (_, i) => ({ role: "user" as const, content: `message ${i}` })),
    );
    for (const [i, item] of items.entries()) await setVector(item.id, model, vec(i, dims));
    const session = (threadId: string) => new PrismaSession(t.db, threadId, u.cipher);
    return { user, items, earlier, current, session };
  }

  const setVector = (id: string, model: string, v: number[]) =>
    t.db.$executeRaw`UPDATE "Item" SET embedding = ${v}::real[], "embeddingModel" = ${model} WHERE id = ${id}`;

  const takeVectors = (ids: string[]) =>
    t.db.$executeRaw`UPDATE "Item" SET embedding = NULL, "embeddingModel" = NULL WHERE id = ANY(${ids}::text[])`;

  const exactTop = (set: Awaited<ReturnType<typeof messageVectors>>, q: number[], exclude: string) =>
    topK(set.ids, set.data, q, K, (i) => set.threadIds[i] !== exclude);

  it("merged with what the read changed, it finds exactly what a scan after the read finds; changes wait for it", async () => {
    const model = "prescan-8";
    const { user, current, session } = await userWithVectors("merge", 200, model, 8);
    const set = await messageVectors(t.db, user, model, 8);
    const q = vec(1000, 8);
    const before = exactTop(set, q, current.id);
    const scan = startPrescan(t.db, user, model, current.id, { k: K + 3, timeoutMs: 10_000 })!;
    expect(scan).not.toBeNull();
    const found = workerScan(q, scan.request);

    // What the turn's first read brings: the best hit's vector taken away, a message nearer than any (and one in the
    // thread being answered, which the search leaves out), another's vector changed.
    await takeVectors([before[0].id]);
    const other = await createThread(await userContext(t.db, user), {});
    const [nearest] = await session(other.id).addItems([{ role: "user", content: "the nearest" }]);
    await setVector(nearest.id, model, q);
    const [own] = await session(current.id).addItems([{ role: "user", content: "in this thread" }]);
    await setVector(own.id, model, q);
    await setVector(before[3].id, model, vec(5000, 8));

    const read = messageVectors(t.db, user, model, 8);
    await new Promise((r) => setTimeout(r, 50));
    // The kept rows wait for the worker: it reads them where they are.
    expect(set.ids).toContain(before[0].id);
    expect(set.ids).not.toContain(nearest.id);
    scan.settle(found);
    const now = await read;

    const merged = mergePrescan(now, scan.result()!, q, K, current.id);
    expect(merged).not.toBeNull();
    expect(merged).toEqual(exactTop(now, q, current.id));
    expect(merged![0].id).toBe(nearest.id);
    expect(merged!.map((h) => h.id)).not.toContain(before[0].id);
    expect(merged!.map((h) => h.id)).not.toContain(own.id);
  });

  it("when more of its rows changed than it kept beyond those asked, it is not used", async () => {
    const model = "prescan-spare";
    const { user, current } = await userWithVectors("spare", 100, model, 8);
    const set = await messageVectors(t.db, user, model, 8);
    const q = vec(2000, 8);
    const scan = startPrescan(t.db, user, model, current.id, { k: K + 2, timeoutMs: 10_000 })!;
    const found = workerScan(q, scan.request);
    scan.settle(found);
    // Three of its seven best gone: the eighth and later, which it did not keep, may now rank among the five.
    const best = exactTop(set, q, current.id);
    await takeVectors(best.slice(0, 3).map((h) => h.id));
    const now = await messageVectors(t.db, user, model, 8);
    expect(mergePrescan(now, scan.result()!, q, K, current.id)).toBeNull();
    // With two gone it can tell.
    const again = startPrescan(t.db, user, model, current.id, { k: K + 2, timeoutMs: 10_000 })!;
    again.settle(workerScan(q, again.request));
    await takeVectors(
      exactTop(now, q, current.id)
        .slice(0, 2)
        .map((h) => h.id),
    );
    const later = await messageVectors(t.db, user, model, 8);
    expect(mergePrescan(later, again.result()!, q, K, current.id)).toEqual(exactTop(later, q, current.id));
  });

  it("a scan asked for another thread than the search leaves out is not used", async () => {
    const model = "prescan-thread";
    const { user, earlier, current } = await userWithVectors("thread", 50, model, 8);
    await messageVectors(t.db, user, model, 8);
    const q = vec(3000, 8);
    const scan = startPrescan(t.db, user, model, current.id, { k: K + 3, timeoutMs: 10_000 })!;
    scan.settle(workerScan(q, scan.request));
    const now = await messageVectors(t.db, user, model, 8);
    expect(mergePrescan(now, scan.result()!, q, K, earlier.id)).toBeNull();
    expect(mergePrescan(now, scan.result()!, q, K, current.id)).toEqual(exactTop(now, q, current.id));
  });

  it("a worker that does not answer in time holds the kept rows no longer, and its late answer is dropped", async () => {
    const model = "prescan-late";
    const { user, earlier, current, session } = await userWithVectors("late", 30, model, 8);
    await messageVectors(t.db, user, model, 8);
    const q = vec(4000, 8);
    const scan = startPrescan(t.db, user, model, current.id, { k: K + 3, timeoutMs: 50 })!;
    const [added] = await session(earlier.id).addItems([{ role: "user", content: "added meanwhile" }]);
    await setVector(added.id, model, q);
    const now = await messageVectors(t.db, user, model, 8);
    expect(now.ids).toContain(added.id);
    scan.settle(workerScan(q, scan.request));
    expect(scan.result()).toBeNull();
    // The next question's scan can start.
    expect(startPrescan(t.db, user, model, current.id, { k: K, timeoutMs: 50 })).not.toBeNull();
  });

  it.runIf(engine === "pglite")(
    "the encoder's worker ranks the kept vectors with the question's vector as this thread would",
    async () => {
      const dims = 512;
      const { user, current } = await userWithVectors("worker", 300, BUILTIN_EMBEDDING_MODEL, dims);
      const set = await messageVectors(t.db, user, BUILTIN_EMBEDDING_MODEL, dims);
      const scan = startPrescan(t.db, user, BUILTIN_EMBEDDING_MODEL, current.id, { k: K + 3, timeoutMs: 60_000 })!;
      let got: SlotScores | null = null;
      const [q] = await embedBuiltin(["Where did we go hiking last summer?"], {
        priority: true,
        scan: { request: scan.request, settle: (r) => (scan.settle(r), (got = r)) },
      });
      expect(got).toEqual(workerScan(q, scan.request));
      const merged = mergePrescan(set, scan.result()!, q, K, current.id);
      expect(merged).toEqual(exactTop(set, q, current.id));
      expect(merged).toHaveLength(K);
    },
  );
});
