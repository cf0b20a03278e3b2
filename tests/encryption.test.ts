// Encryption at rest, end to end through the chat's own code: what the user
// and the model see is plain text, what the tables hold is not; search and
// recall still work over the keyed token index; keys rotate.
import crypto from "node:crypto";
import { userContext } from "@/lib/user-context";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { collect, deferred } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { clearConnectionCache, saveConnection } from "@/lib/llm/connection";
import { runTurn } from "@/lib/chat/turn";
import { listThreads, threadView } from "@/lib/chat/threads";
import { listMemories, searchMemories } from "@/lib/memory/long-term";
import { addMemory } from "@/lib/memory/store";
import { recall } from "@/lib/memory/recall";
import { forgetCachedKeys, setEncryptionKeys, UNREADABLE } from "@/lib/crypto/content";
import { rotateKeys } from "@/lib/crypto/rotate";
import { rowsContaining, tables } from "@/testing/privacy-checks";

const KEY_A = crypto.randomBytes(32).toString("base64");
const KEY_B = crypto.randomBytes(32).toString("base64");

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
afterEach(() => setEncryptionKeys(undefined));

/** Tables with raw rows that contain `needle` (what a stolen backup would show). */
async function rawHits(t: TestDb, needle: string): Promise<string[]> {
  const hits: string[] = [];
  for (const name of await tables(t.db)) if (await rowsContaining(t.db, name, needle)) hits.push(name);
  return hits.sort();
}

describe.each(engines)("encryption at rest on %s", (engine) => {
  let t: TestDb;
  let userId: string;
  const { defer, flush } = deferred(() => t.db);
  beforeAll(async () => {
    t = await createTestDb(engine);
    userId = (await t.db.user.create({ data: { email: `enc-${engine}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, userId);
    clearConnectionCache(t.db);
  });
  afterAll(async () => t?.close());

  it("without a key the scan finds plain text (so the check below can fail)", async () => {
    mock.script({ match: "plainmarker", content: "ok" }, { json: { decisions: [] }, times: 0 });
    await collect(runTurn(t.db, userId, { kind: "send", content: "plainmarker here" }, { defer }));
    await flush();
    expect(await rawHits(t, "plainmarker")).toContain("Item");
  });

  it("with a key, tables hold ciphertext while the user, the model and recall see plain text", async () => {
    setEncryptionKeys({ key: KEY_A });
    mock.reset();
    mock.script(
      {
        match: "Quetzalcoatl",
        content: "Noted, Quetzalcoatl it is.",
        toolCalls: [{ name: "remember", arguments: { text: "Favourite deity is Quetzalcoatl" } }],
      },
      { content: "Saved Quetzalcoatl." },
      { system: "title", content: "Deity Quetzalcoatl" }, // the title, whichever job runs first
      { json: { decisions: [] }, times: 0 },
    );
    const events = await collect(
      runTurn(t.db, userId, { kind: "send", content: "Remember my favourite deity: Quetzalcoatl" }, { defer }),
    );
    await flush();
    const threadId = (events[0] as { threadId: string }).threadId;
    expect(await rawHits(t, "Quetzalcoatl")).toEqual([]);
    expect(await rawHits(t, "favourite deity")).toEqual([]);
    const view = await threadView(await userContext(t.db, userId), threadId);
    expect(view.items[0].content).toBe("Remember my favourite deity: Quetzalcoatl");
    expect(view.items.find((i) => i.toolCalls)?.toolCalls?.[0].arguments).toContain("Quetzalcoatl");
    expect(view.thread.title).toMatch(/Quetzalcoatl/);
    expect((await listThreads(await userContext(t.db, userId), { q: "quetzal" })).threads.map((x) => x.id)).toEqual([
      threadId,
    ]);
    expect((await listMemories(await userContext(t.db, userId), { q: "deity" })).map((m) => m.text)).toEqual([
      "Favourite deity is Quetzalcoatl",
    ]);
    expect(
      (await searchMemories(await userContext(t.db, userId), "which deities do I like?")).map((m) => m.text),
    ).toEqual(["Favourite deity is Quetzalcoatl"]);
    const r = await recall(await userContext(t.db, userId), "Tell me about Quetzalcoatl", { budget: 1000 });
    expect(r.memories.map((m) => m.text)).toEqual(["Favourite deity is Quetzalcoatl"]);
    expect(r.passages.flatMap((p) => p.lines).join(" ")).toContain("Remember my favourite deity: Quetzalcoatl");
    // The next turn's request to the model carries the memory in plain text.
    mock.reset();
    mock.script({ match: "who do i worship", content: "Quetzalcoatl." }, { json: { decisions: [] }, times: 0 });
    await collect(runTurn(t.db, userId, { kind: "send", content: "Who do I worship? Quetzalcoatl?" }, { defer }));
    await flush();
    expect(JSON.stringify(mock.chatRequests()[0].body.messages)).toContain("Favourite deity is Quetzalcoatl");
  });

  it("rotates the master key, then the data keys; rows stay readable and old keys go", async () => {
    setEncryptionKeys({ key: KEY_A });
    await addMemory(await userContext(t.db, userId), { text: "Plays the theremin", source: "explicit" }, "user", "t");
    const before = await t.db.userKey.findMany({ where: { userId } });
    expect(before).toHaveLength(1);

    // New master key, old one given as previous: keys are re-wrapped.
    setEncryptionKeys({ key: KEY_B, previousKey: KEY_A });
    const r1 = await rotateKeys(t.db);
    expect(r1.usersRewrapped).toBeGreaterThanOrEqual(1);
    setEncryptionKeys({ key: KEY_B }); // the old master key is no longer needed
    expect((await listMemories(await userContext(t.db, userId), { q: "theremin" })).map((m) => m.text)).toEqual([
      "Plays the theremin",
    ]);

    // New data keys: every row re-encrypted under version 2, version 1 removed.
    const r2 = await rotateKeys(t.db, { dataKeys: true });
    expect(r2.newDataKeys).toBeGreaterThanOrEqual(1);
    expect(r2.rowsEncrypted).toBeGreaterThan(0);
    expect(r2.oldKeysRemoved).toBeGreaterThanOrEqual(1);
    expect((await t.db.userKey.findMany({ where: { userId } })).map((k) => k.version)).toEqual([2]);
    const raw = await t.db.memory.findMany({ where: { userId }, select: { text: true } });
    expect(raw.every((m) => m.text.startsWith("enc1:2:"))).toBe(true);
    // The plain-text row written before encryption was on is encrypted now too.
    expect(await rawHits(t, "plainmarker")).toEqual([]);
    forgetCachedKeys();
    expect((await searchMemories(await userContext(t.db, userId), "theremin")).map((m) => m.text)).toEqual([
      "Plays the theremin",
    ]);

    // Without any key the app cannot read the rows (and says so).
    setEncryptionKeys(undefined);
    expect((await listMemories(await userContext(t.db, userId), {}))[0].text).toBe(UNREADABLE);
  });
});
