// A document sent in a chat is found by the message search with its thread (lib/attachments/passage-index.ts): the
// hit names the file and the page, only its owner finds it, with or without encryption at rest; an edited message's
// copy is found too; deleting the thread, or the account, takes its passages; documents stored before passages were
// indexed are indexed by the sweeper; an import's files are searchable like an upload's.
import crypto from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { pdfOf } from "@/testing/pdf";
import { userContext, type UserContext } from "@/lib/user-context";
import { appendItems } from "@/lib/memory/session";
import { forgetCachedKeys, setEncryptionKeys } from "@/lib/crypto/content";
import { searchMessages } from "@/lib/chat/search";
import { bindToMessage, copyAttachments, saveUpload } from "@/lib/attachments/store";
import { indexDocument, indexOlderDocuments } from "@/lib/attachments/passage-index";
import { deleteThread } from "@/lib/chat/threads";
import { rotateKeys } from "@/lib/crypto/rotate";

afterEach(() => setEncryptionKeys(undefined));

const filler = (i: number) =>
  `Section ${i} covers routine maintenance of the building, cleaning schedules, hallway lighting and the ` +
  `recycling rota for the residents of floor ${i % 7}. Nothing unusual is reported for this period.`;

describe.each(engines)("documents in the message search on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  const newUser = async () =>
    userContext(t.db, (await t.db.user.create({ data: { email: `docsearch-${engine}-${n++}@example.com` } })).id);

  /** A thread whose first message carries these files (uploaded, then sent with it). */
  async function sent(u: UserContext, message: string, files: Array<[string, Uint8Array]>) {
    const th = await t.db.thread.create({ data: { userId: u.userId, title: u.cipher.seal("Handbook questions") } });
    const [item] = await appendItems(t.db, th.id, [{ role: "user", content: message }], { cipher: u.cipher });
    const metas = [];
    for (const [name, bytes] of files) metas.push(await saveUpload(u, name, bytes));
    await bindToMessage(
      t.db,
      u.userId,
      metas.map((m) => m.id),
      th.id,
      item.id,
    );
    // A long document's search rows are written by its job a moment after the upload (a short one's with it).
    for (const m of metas) await indexDocument(t.db, m.id);
    return { threadId: th.id, itemId: item.id, files: metas };
  }

  for (const encrypted of [false, true]) {
    it(`finds a word on page 217 of a 300-page PDF, naming the file and page, for its owner only (encryption ${encrypted ? "on" : "off"})`, async () => {
      if (encrypted) setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
      const u = await newUser();
      const other = await newUser();
      const pages = Array.from({ length: 300 }, (_, i) => filler(i + 1));
      pages[216] = "The boiler room key is kept by the caretaker, Mr Okonkwo, in the blue cabinet.";
      const s = await sent(u, "Here is the building handbook", [["handbook.pdf", await pdfOf(pages)]]);

      const { hits } = await searchMessages(u, { q: "okonkwo cabinet" });
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({
        itemId: s.itemId,
        threadId: s.threadId,
        threadTitle: "Handbook questions",
        file: { name: "handbook.pdf", page: 217 },
      });
      expect(hits[0].snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(["Okonkwo", "cabinet"]);
      expect((await searchMessages(other, { q: "okonkwo" })).hits).toEqual([]);

      // A word in the message itself and in its document: one hit, the message's own words.
      const both = await searchMessages(u, { q: "handbook" });
      expect(both.hits).toHaveLength(1);
      expect(both.hits[0].file).toBeUndefined();
      // A common word of the document: one hit per message, not one per passage.
      expect((await searchMessages(u, { q: "recycling" })).hits).toHaveLength(1);

      if (encrypted) {
        // At rest the passages are sealed, and still found after the user's key is rotated.
        const stored = await t.db.attachmentPassage.findFirst({ where: { userId: u.userId, page: 217 } });
        expect(stored?.content).not.toContain("Okonkwo");
        await rotateKeys(t.db, { dataKeys: true });
        forgetCachedKeys();
        const after = await searchMessages(await userContext(t.db, u.userId), { q: "okonkwo" });
        expect(after.hits.map((h) => h.file)).toEqual([{ name: "handbook.pdf", page: 217 }]);
      }
    }, 60_000);
  }

  it("messages and documents' hits come newest first, a page at a time", async () => {
    const u = await newUser();
    const older = await sent(u, "the first notes", [["a.txt", Buffer.from("Quince jelly needs pectin.")]]);
    const middle = await t.db.thread.create({ data: { userId: u.userId } });
    await appendItems(t.db, middle.id, [{ role: "user", content: "My quince tree flowered" }], { cipher: u.cipher });
    const newer = await sent(u, "more notes", [["b.md", Buffer.from("# Quince\nPrune the quince in winter.")]]);
    const first = await searchMessages(u, { q: "quince", limit: 2 });
    expect(first.hits.map((h) => [h.threadId, h.file?.name ?? null])).toEqual([
      [newer.threadId, "b.md"],
      [middle.id, null],
    ]);
    const rest = await searchMessages(u, { q: "quince", limit: 2, cursor: first.nextCursor! });
    expect(rest.hits.map((h) => [h.threadId, h.file?.name])).toEqual([[older.threadId, "a.txt"]]);
    expect(rest.nextCursor).toBeNull();
  });

  it("an edited message's files are found in its new version; deleting the thread takes the passages", async () => {
    const u = await newUser();
    const s = await sent(u, "my lease", [["lease.txt", Buffer.from("Pets are allowed with a deposit of 300 euros.")]]);
    const [edited] = await appendItems(t.db, s.threadId, [{ role: "user", content: "my lease, again" }], {
      cipher: u.cipher,
    });
    await copyAttachments(t.db, u.userId, s.itemId, edited.id);
    const hits = (await searchMessages(u, { q: "deposit pets" })).hits;
    expect(hits.map((h) => h.itemId).sort()).toEqual([s.itemId, edited.id].sort());
    expect(await t.db.attachmentPassage.count({ where: { userId: u.userId } })).toBe(2);

    await deleteThread(t.db, u.userId, s.threadId);
    expect(await t.db.attachmentPassage.count({ where: { userId: u.userId } })).toBe(0);
    expect((await searchMessages(u, { q: "deposit" })).hits).toEqual([]);
  });

  it("a document stored before passages were indexed is indexed by the sweeper, once, on any instance", async () => {
    const u = await newUser();
    const s = await sent(u, "old upload", [["old.txt", Buffer.from("The wifi password is on the fridge magnet.")]]);
    const id = s.files[0].id;
    // As an attachment stored before the migration: no passages, not marked.
    await t.db.attachmentPassage.deleteMany({ where: { attachmentId: id } });
    await t.db.attachment.update({ where: { id }, data: { passagesIndexed: false } });
    expect((await searchMessages(u, { q: "fridge magnet" })).hits).toEqual([]);

    // Two instances' sweepers at once: the document is indexed once.
    const [a, b] = await Promise.all([indexOlderDocuments(t.db), indexOlderDocuments(t.db)]);
    expect(a + b).toBe(1);
    expect(await t.db.attachmentPassage.count({ where: { attachmentId: id } })).toBe(1);
    expect((await searchMessages(u, { q: "fridge magnet" })).hits[0]?.file).toEqual({ name: "old.txt", page: null });
    expect(await indexOlderDocuments(t.db)).toBe(0);
  });
});
