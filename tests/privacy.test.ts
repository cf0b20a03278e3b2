// Data rights on real databases: deletion leaves nothing of the user anywhere
// (checked against the live catalog), the export holds every row, nothing is
// stored in plain text with encryption on, admin reads are audited, audit rows
// cannot be changed, and retention follows a controllable clock.
import { createUser } from "@/lib/auth/users";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { collectExport, runPrivacyChecks } from "@/testing/privacy-checks";
import { accountSuccession, deleteAccount } from "@/lib/account/delete";
import { runRetention, setRetentionForTests } from "@/lib/account/retention";
import { appendItems } from "@/lib/memory/session";
import { createThread, listThreads, threadView } from "@/lib/chat/threads";
import { loadContext } from "@/lib/chat/context";
import { recall } from "@/lib/memory/recall";
import { addMemory } from "@/lib/memory/store";
import { importMemories, memoriesJson, memoriesMarkdown } from "@/lib/memory/portable";
import { auditAboutUser, reviewThread } from "@/lib/admin/review";

describe.each(engines)("data rights on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  it("deletion, export, encryption and audit checks all come out clean", async () => {
    const r = await runPrivacyChecks(t.db);
    expect(r.details).toEqual([]);
    expect(r.tables_checked).toBeGreaterThanOrEqual(15);
    expect(r).toMatchObject({
      rows_left_after_delete: 0,
      export_missing_rows: 0,
      plaintext_hits: 0,
      unaudited_admin_reads: 0,
      unmapped_tables: [],
      other_user_rows_changed: 0,
      shredded_still_readable: 0,
      rotation_unreadable: 0,
    });
  });

  it("a table the data map does not cover fails the check by itself", async () => {
    const extra = await createTestDb(engine);
    try {
      await extra.db.$executeRawUnsafe(
        `CREATE TABLE "Bookmark" (id text PRIMARY KEY, "userId" text REFERENCES "User"(id))`,
      );
      const r = await runPrivacyChecks(extra.db);
      expect(r.unmapped_tables).toEqual(["Bookmark"]);
    } finally {
      await extra.close();
    }
  });

  it("the sole admin deletes their account by naming who becomes admin, in the same transaction", async () => {
    const admin = await t.db.user.create({ data: { email: `solo-admin-${engine}@example.com`, role: "ADMIN" } });
    await t.db.user.updateMany({ where: { role: "ADMIN", NOT: { id: admin.id } }, data: { role: "USER" } });
    const off = await t.db.user.create({ data: { email: `off-${engine}@example.com`, disabled: true } });
    const next = await t.db.user.create({ data: { email: `next-admin-${engine}@example.com` } });
    await expect(deleteAccount(t.db, admin.id, { actorId: admin.id })).rejects.toThrow(/choose who becomes admin/);
    expect(await t.db.user.count({ where: { id: admin.id } })).toBe(1);
    const s = await accountSuccession(t.db, admin.id);
    expect(s).toMatchObject({ soleAdmin: true, onlyAccount: false });
    expect(s.successors.map((u) => u.id)).toContain(next.id);
    expect(s.successors.map((u) => u.id)).not.toContain(off.id);
    // A disabled account cannot take over (nobody could sign in as admin).
    await expect(deleteAccount(t.db, admin.id, { actorId: admin.id, successorId: off.id })).rejects.toThrow(
      /can no longer become admin/,
    );
    await deleteAccount(t.db, admin.id, { actorId: admin.id, successorId: next.id });
    expect(await t.db.user.count({ where: { id: admin.id } })).toBe(0);
    expect((await t.db.user.findUniqueOrThrow({ where: { id: next.id } })).role).toBe("ADMIN");
    expect(await auditAboutUser(t.db, next.id)).toMatchObject([{ action: "user.role" }]);
  });

  it("the only account may delete itself: the instance goes back to its first run", async () => {
    const solo = await createTestDb(engine);
    try {
      const only = await createUser(solo.db, { email: "only@example.com", passwordHash: null });
      expect(only.role).toBe("ADMIN");
      expect(await accountSuccession(solo.db, only.id)).toMatchObject({ soleAdmin: true, onlyAccount: true });
      await deleteAccount(solo.db, only.id, { actorId: only.id });
      expect(await solo.db.user.count()).toBe(0);
      const again = await createUser(solo.db, { email: "again@example.com", passwordHash: null });
      expect(again.role).toBe("ADMIN");
    } finally {
      await solo.close();
    }
  });

  it("audit rows are append-only in the database itself", async () => {
    const admin = await t.db.user.create({ data: { email: `auditor-${engine}@example.com`, role: "ADMIN" } });
    const user = await t.db.user.create({ data: { email: `audited-${engine}@example.com` } });
    const th = await createThread(await userContext(t.db, user.id));
    await appendItems(t.db, th.id, [{ role: "user", content: "hello there" }], {
      cipher: await threadCipher(t.db, th.id),
    });
    await reviewThread(t.db, admin.id, th.id, "Support ticket 7");
    const row = await t.db.auditLog.findFirstOrThrow({ where: { subjectUserId: user.id } });
    expect(row).toMatchObject({
      actorId: admin.id,
      action: "thread.view",
      threadId: th.id,
      reason: "Support ticket 7",
    });
    await expect(t.db.auditLog.update({ where: { id: row.id }, data: { reason: "nothing" } })).rejects.toThrow(
      /append-only/,
    );
    await expect(t.db.auditLog.delete({ where: { id: row.id } })).rejects.toThrow(/append-only/);
    expect(await auditAboutUser(t.db, user.id)).toMatchObject([
      { action: "thread.view", reason: "Support ticket 7", actor: admin.email },
    ]);
    // The user's export carries the entry about them.
    expect(await collectExport(t.db, user.id)).toContain("Support ticket 7");
  });

  it("retention hides expired messages at once and the job deletes them (controllable clock)", async () => {
    const user = await t.db.user.create({ data: { email: `retention-${engine}@example.com` } });
    const old = await createThread(await userContext(t.db, user.id), { title: "old" });
    const [q1, a1] = await appendItems(
      t.db,
      old.id,
      [
        { role: "user", content: "ancient zebra question" },
        { role: "assistant", content: "ancient answer" },
      ],
      { cipher: await threadCipher(t.db, old.id) },
    );
    const [q2] = await appendItems(
      t.db,
      old.id,
      [
        { role: "user", content: "recent zebra question" },
        { role: "assistant", content: "recent answer" },
      ],
      { cipher: await threadCipher(t.db, old.id) },
    );
    const gone = await createThread(await userContext(t.db, user.id), { title: "gone" });
    await appendItems(t.db, gone.id, [{ role: "user", content: "zebra long ago" }], {
      cipher: await threadCipher(t.db, gone.id),
    });
    const temp = await createThread(await userContext(t.db, user.id), { temporary: true });
    // Age the first turn and the second thread by 40 days.
    const past = new Date(Date.now() - 40 * 86_400_000);
    await t.db.item.updateMany({ where: { id: { in: [q1.id, a1.id] } }, data: { createdAt: past } });
    await t.db.item.updateMany({ where: { threadId: gone.id }, data: { createdAt: past } });
    await t.db.thread.update({ where: { id: gone.id }, data: { lastActivityAt: past } });
    await t.db.thread.update({ where: { id: temp.id }, data: { createdAt: new Date(Date.now() - 3 * 3_600_000) } });
    setRetentionForTests({ messageDays: 30, temporaryChatHours: 2 });
    try {
      // Hidden before the job runs: not shown, not in the model's context, not recalled.
      const view = await threadView(await userContext(t.db, user.id), old.id);
      expect(view.items.map((i) => i.content)).toEqual(["recent zebra question", "recent answer"]);
      const ctx = await loadContext(t.db, old.id, view.items[1].id, { cipher: await threadCipher(t.db, old.id) });
      expect(ctx.window.map((i) => i.content)).toEqual(["recent zebra question", "recent answer"]);
      const r = await recall(await userContext(t.db, user.id), "zebra", { budget: 2000 });
      expect(JSON.stringify(r.passages)).not.toMatch(/ancient|long ago/);
      expect(JSON.stringify(r.passages)).toContain("recent zebra question");
      // The job, on a clock 1 day ahead, deletes exactly what expired.
      const counts = await runRetention(t.db, new Date(Date.now() + 86_400_000));
      expect(counts).toMatchObject({ messages: 3, summaries: 0, threads: 1, temporaryChats: 1, memoriesExpired: 0 });
      expect(await t.db.item.findUnique({ where: { id: q2.id } })).not.toBeNull();
      expect((await threadView(await userContext(t.db, user.id), old.id)).items).toHaveLength(2);
      expect((await listThreads(await userContext(t.db, user.id), {})).threads.map((x) => x.title)).toEqual(["old"]);
      // Run again: nothing more to do.
      expect(await runRetention(t.db, new Date(Date.now() + 86_400_000))).toMatchObject({
        messages: 0,
        summaries: 0,
        threads: 0,
        temporaryChats: 0,
        memoriesExpired: 0,
      });
      // With memory expiry set, the job also archives memories unused that long.
      await addMemory(
        await userContext(t.db, user.id),
        { text: "Owned a zebra once", source: "inferred" },
        "model",
        "t",
      );
      const later = await runRetention(t.db, new Date(Date.now() + 100 * 86_400_000), undefined, 90);
      expect(later.memoriesExpired).toBeGreaterThanOrEqual(1); // every user's, not only this one's
      expect((await t.db.memory.findFirstOrThrow({ where: { userId: user.id } })).status).toBe("archived");
    } finally {
      setRetentionForTests(undefined);
    }
  });

  it("memories export as JSON and Markdown and import back with duplicates skipped", async () => {
    const a = await t.db.user.create({ data: { email: `export-a-${engine}@example.com` } });
    const b = await t.db.user.create({ data: { email: `export-b-${engine}@example.com` } });
    await addMemory(
      await userContext(t.db, a.id),
      { text: "Prefers tea over coffee", kind: "preference", source: "explicit", pinned: true },
      "user",
      "t",
    );
    await addMemory(
      await userContext(t.db, a.id),
      { text: "Works as a nurse\n# not a heading", source: "inferred" },
      "model",
      "t",
    );
    const json = await memoriesJson(await userContext(t.db, a.id));
    expect(json).toMatchObject({ format: "mnemo-memories", version: 1 });
    expect(json.memories.map((m) => m.text).sort()).toEqual([
      "Prefers tea over coffee",
      "Works as a nurse\n# not a heading",
    ]);
    const md = await memoriesMarkdown(await userContext(t.db, a.id));
    expect(md).toContain("## Preferences\n\n- Prefers tea over coffee _(pinned, explicit;");
    expect(md).not.toMatch(/^# not a heading/m);
    await addMemory(
      await userContext(t.db, b.id),
      { text: "prefers tea over coffee!", source: "explicit" },
      "user",
      "t",
    );
    const r = await importMemories(await userContext(t.db, b.id), {
      ...json,
      memories: [...json.memories, { text: "   " }, { text: "My password is hunter2hunter2" }],
    });
    expect(r.added).toBe(1);
    expect(r.skipped).toBe(1);
    expect(r.rejected.map((x) => x.index)).toEqual([2, 3]);
    expect(await t.db.memory.count({ where: { userId: b.id } })).toBe(2);
    expect(await t.db.memory.count({ where: { userId: a.id } })).toBe(2);
    await expect(
      importMemories(await userContext(t.db, b.id), { format: "other", version: 1, memories: [] }),
    ).rejects.toThrow(/Not a Mnemo memories file/);
  });
});

describe.each(engines)("finished jobs on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  it("jobs:retention deletes finished jobs after a week and keeps queued, failed and recent ones", async () => {
    const day = 86_400_000;
    const now = new Date();
    const old = new Date(now.getTime() - 8 * day);
    const mk = (status: "done" | "queued" | "failed", finishedAt: Date | null) =>
      t.db.job.create({ data: { kind: "title", payload: {}, status, finishedAt } });
    const gone = await mk("done", old);
    const kept = await Promise.all([mk("done", new Date(now.getTime() - day)), mk("queued", null), mk("failed", old)]);
    const counts = await runRetention(t.db, now);
    expect(counts.jobsPruned).toBe(1);
    expect(await t.db.job.findUnique({ where: { id: gone.id } })).toBeNull();
    expect(await t.db.job.count({ where: { id: { in: kept.map((j) => j.id) } } })).toBe(3);
  });
});
