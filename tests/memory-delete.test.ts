// Deleting a memory on the dashboard is restorable: it goes to the archive (out of every prompt at once), the toast's
// Undo or the archive's Restore brings it back as it was, and only the archive deletes for good.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext } from "@/lib/user-context";
import { addMemory, archiveByUser, endMemory, restoreByUser } from "@/lib/memory/store";
import { recall } from "@/lib/memory/recall";

describe.each(engines)("deleting a memory on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => {
    await t?.close();
  });
  const newUser = async () =>
    userContext(t.db, (await t.db.user.create({ data: { email: `del-${engine}-${n++}@example.com` } })).id);
  const recalled = async (u: Awaited<ReturnType<typeof newUser>>, q: string) =>
    (await recall(u, q, { budget: 2000 })).memories.map((m) => m.text);

  it("goes to the archive, out of recall at once, and Undo brings it back as it was", async () => {
    const u = await newUser();
    const dog = await addMemory(u, { text: "Has a beagle called Biscuit", source: "explicit" }, "user", "said so");
    const job = await addMemory(u, { text: "Works as a nurse in Leeds", source: "explicit" }, "user", "said so");
    await endMemory(u, job.id, "user", "No longer true");
    const other = await addMemory(u, { text: "Lives in Porto", source: "explicit" }, "user", "said so");
    await t.db.memory.update({ where: { id: other.id }, data: { conflictWithId: dog.id } });
    expect(await recalled(u, "What is my beagle called?")).toContain("Has a beagle called Biscuit");

    const { archived } = await archiveByUser(u, [dog.id, job.id], "Deleted on the memory dashboard");
    expect(archived.sort()).toEqual([dog.id, job.id].sort());
    expect(await recalled(u, "What is my beagle called?")).not.toContain("Has a beagle called Biscuit");
    // An open conflict with it is closed: nothing left to settle against a deleted memory.
    expect((await t.db.memory.findUniqueOrThrow({ where: { id: other.id } })).conflictWithId).toBeNull();

    expect(await restoreByUser(u, archived, "Restored on the memory dashboard")).toBe(2);
    const rows = await t.db.memory.findMany({ where: { id: { in: [dog.id, job.id] } } });
    expect(Object.fromEntries(rows.map((m) => [m.id, m.status]))).toEqual({ [dog.id]: "active", [job.id]: "past" });
    expect(await recalled(u, "What is my beagle called?")).toContain("Has a beagle called Biscuit");
    const reasons = (
      await t.db.memoryVersion.findMany({ where: { memoryId: dog.id }, orderBy: { createdAt: "asc" } })
    ).map((v) => v.reason);
    expect(reasons.slice(-2)).toEqual(["Deleted on the memory dashboard", "Restored on the memory dashboard"]);
  });

  it("a memory still waiting for review goes for good; another user's ids do nothing", async () => {
    const u = await newUser();
    const stranger = await newUser();
    const waiting = await addMemory(
      u,
      { text: "Might like jazz", source: "inferred", status: "pending" },
      "model",
      "x",
    );
    const mine = await addMemory(u, { text: "Drinks oat milk", source: "explicit" }, "user", "said so");
    expect(await archiveByUser(stranger, [waiting.id, mine.id], "Deleted")).toEqual({ archived: [], deleted: 0 });
    expect(await restoreByUser(stranger, [mine.id], "Restored")).toBe(0);
    expect(await archiveByUser(u, [waiting.id], "Deleted")).toEqual({ archived: [], deleted: 1 });
    expect(await t.db.memory.count({ where: { id: waiting.id } })).toBe(0);
    expect((await t.db.memory.findUniqueOrThrow({ where: { id: mine.id } })).status).toBe("active");
  });
});
