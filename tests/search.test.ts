// Searching past chats by what was said (lib/chat/search.ts): every word must
// match, newest first, a page at a time, only the user's own non-temporary
// threads, with or without encryption at rest, and with the matched words marked.
import crypto from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext, type UserContext } from "@/lib/user-context";
import { appendItems } from "@/lib/memory/session";
import { setEncryptionKeys } from "@/lib/crypto/content";
import { searchMessages, snippet } from "@/lib/chat/search";
import { indexWords } from "@/lib/crypto/content";

afterEach(() => setEncryptionKeys(undefined));

describe("snippets", () => {
  it("mark each matched word, stemmed and in any case, around the first match", () => {
    const text = `${"word ".repeat(40)}We planted Tomatoes in the garden. The tomato harvest was great. ${"tail ".repeat(40)}`;
    const parts = snippet(text, new Set(indexWords("tomato")));
    expect(parts[0]).toEqual({ text: "…", hit: false });
    expect(parts.at(-1)).toEqual({ text: "…", hit: false });
    expect(parts.filter((p) => p.hit).map((p) => p.text)).toEqual(["Tomatoes", "tomato"]);
    expect(parts.map((p) => p.text).join("").length).toBeLessThan(200);
  });

  it("of a message of a million characters: the first match, in what the search reads", () => {
    const text = `${"Chapter text goes on. ".repeat(2000)}The pelican sleeps. ${"More text. ".repeat(90_000)}`;
    const parts = snippet(text, new Set(indexWords("pelican")));
    expect(parts.filter((p) => p.hit).map((p) => p.text)).toEqual(["pelican"]);
    expect(parts.at(-1)).toEqual({ text: "…", hit: false });
  });
});

describe.each(engines)("searching messages on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  const newUser = async () =>
    userContext(t.db, (await t.db.user.create({ data: { email: `search-${engine}-${n++}@example.com` } })).id);
  const thread = async (u: UserContext, texts: string[], data: { temporary?: boolean; importSource?: string } = {}) => {
    const th = await t.db.thread.create({ data: { userId: u.userId, title: u.cipher.seal("Garden chat"), ...data } });
    const items = await appendItems(
      t.db,
      th.id,
      texts.map((content, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content })),
      { cipher: u.cipher },
    );
    return { threadId: th.id, items };
  };

  for (const encrypted of [false, true]) {
    it(`finds messages by words from their body, newest first, only the user's own (encryption ${encrypted ? "on" : "off"})`, async () => {
      if (encrypted) setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
      const u = await newUser();
      const other = await newUser();
      const old = await thread(u, ["My tomatoes have blight on the leaves", "Remove the affected leaves."]);
      const recent = await thread(u, ["Which tomato variety resists blight?", "Try Mountain Magic."]);
      await thread(u, ["blight on my tomatoes again"], { temporary: true });
      await thread(other, ["tomato blight everywhere"]);
      const r = await searchMessages(u, { q: "tomato blight" });
      expect(r.hits.map((h) => h.itemId)).toEqual([recent.items[0].id, old.items[0].id]);
      expect(r.hits[0]).toMatchObject({ threadId: recent.threadId, threadTitle: "Garden chat", role: "user" });
      expect(r.hits[0].snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(["tomato", "blight"]);
      // A word only the answer said finds the answer.
      expect((await searchMessages(u, { q: "affected" })).hits.map((h) => h.itemId)).toEqual([old.items[1].id]);
      expect((await searchMessages(u, { q: "zucchini" })).hits).toEqual([]);
      // Every word must match.
      expect((await searchMessages(u, { q: "blight magic" })).hits).toEqual([]);
    });
  }

  for (const encrypted of [false, true]) {
    it(`a word finds its irregular forms, and every word must still match (encryption ${encrypted ? "on" : "off"})`, async () => {
      if (encrypted) setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
      const u = await newUser();
      const { items } = await thread(u, ["We should buy a greenhouse for the children", "A small one is enough."]);
      const ids = async (q: string) => (await searchMessages(u, { q })).hits.map((h) => h.itemId);
      // Stemming joins "buying" to "buy", never "bought" or "child" to "children".
      expect(await ids("bought greenhouse")).toEqual([items[0].id]);
      expect(await ids("child")).toEqual([items[0].id]);
      const r = await searchMessages(u, { q: "bought" });
      expect(r.hits[0].snippet.filter((p) => p.hit).map((p) => p.text)).toEqual(["buy"]);
      // A form counts for its word only: the other words must match too.
      expect(await ids("bought tomatoes")).toEqual([]);
      // A word the index leaves out is left out with its forms ("noes" for "no"), not made a word to match.
      if (!encrypted) expect(await ids("no greenhouse")).toEqual([items[0].id]);
    });
  }

  for (const encrypted of [false, true]) {
    it(`a message of 700,000 characters of varied words is stored whole and found by its first pages (encryption ${encrypted ? "on" : "off"})`, async () => {
      if (encrypted) setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
      const u = await newUser();
      // Unique short words: the text whose search entry is largest (PostgreSQL refuses one over 1 MB).
      const words = Array.from({ length: 120_000 }, (_, i) => (i * 7919 + 1_000_003).toString(36)).join(" ");
      const long = `Soil report from Braga. ${words} Closing words about Lisbon.`;
      const { items } = await thread(u, [long]);
      const stored = await t.db.item.findUniqueOrThrow({ where: { id: items[0].id } });
      expect(u.cipher.open(stored.content)).toBe(long);
      expect((await searchMessages(u, { q: "Braga soil" })).hits.map((h) => h.itemId)).toEqual([items[0].id]);
      // Past what the search entry reads, a word is not found; the message is still all there.
      expect((await searchMessages(u, { q: "Lisbon" })).hits).toEqual([]);
    });
  }

  it("pages with a cursor and filters to imported conversations", async () => {
    const u = await newUser();
    const mine = await thread(u, ["sourdough starter one", "ok", "sourdough starter two", "ok"]);
    const imported = await thread(u, ["sourdough starter from before"], { importSource: "chatgpt" });
    const first = await searchMessages(u, { q: "sourdough", limit: 2 });
    expect(first.hits).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = await searchMessages(u, { q: "sourdough", limit: 2, cursor: first.nextCursor! });
    const all = [...first.hits, ...second.hits].map((h) => h.itemId);
    expect(new Set(all).size).toBe(3);
    expect(second.nextCursor).toBeNull();
    const only = await searchMessages(u, { q: "sourdough", imported: true });
    expect(only.hits.map((h) => [h.itemId, h.imported])).toEqual([[imported.items[0].id, true]]);
    const own = await searchMessages(u, { q: "sourdough", imported: false });
    expect(own.hits.map((h) => h.itemId).sort()).toEqual([mine.items[0].id, mine.items[2].id].sort());
  });

  it("a word in thousands of messages still gives exactly the newest, page after page", async () => {
    const u = await newUser();
    const texts = (from: number, n: number) => Array.from({ length: n }, (_, i) => `common kettle note ${from + i}`);
    const a = await thread(u, texts(0, 500));
    await thread(u, texts(500, 500), { temporary: true });
    const b = await thread(u, texts(1000, 700));
    await thread(u, ["nothing relevant here"]);
    // What the newest-first order is, read directly.
    const expected = await t.db.item.findMany({
      where: { threadId: { in: [a.threadId, b.threadId] } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true },
    });
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page++) {
      const r = await searchMessages(u, { q: "kettle", limit: 50, cursor });
      seen.push(...r.hits.map((h) => h.itemId));
      cursor = r.nextCursor ?? undefined;
    }
    expect(seen).toEqual(expected.slice(0, 150).map((e) => e.id));
  });
});
