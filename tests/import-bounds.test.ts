// Import files written to hurt: repeated ids, reply cycles, a long hidden chain
// and a zip bomb. Each must end, keep what is sound, and say what was left out.
import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { userContext } from "@/lib/user-context";
import { importConversations } from "@/lib/import/run";
import { IMPORT_RUNNING } from "@/lib/import/lock";
import { strToU8, zipSync } from "fflate";
import { pruneTree, type ImportedMessage } from "@/lib/import/conversation";
import { parseChatGpt } from "@/lib/import/formats/chatgpt";
import { readExport } from "@/lib/import/read";
import { unzipIfNeeded, type SideFiles } from "@/lib/import/unzip";

const node = (id: string, parent: string | null, text: string | null, children: string[] = []) => ({
  id,
  parent,
  children,
  message: text === null ? null : { author: { role: "user" }, content: { content_type: "text", parts: [text] } },
});

const msg = (ref: string, parentRef: string | null, keep = true): ImportedMessage & { keep: boolean } => ({
  ref,
  parentRef,
  role: "user",
  content: ref,
  createdAt: null,
  keep,
});

describe("import trees that are not trees", () => {
  it("two mapping nodes sharing one id, the second parented to the first, import once (the 300-byte crash)", () => {
    const c = {
      id: "c1",
      title: "dup",
      mapping: { a: node("x", null, "first"), b: node("x", "x", "second") },
      current_node: "x",
    };
    const conv = parseChatGpt(c);
    expect(conv.messages.map((m) => m.content)).toEqual(["first"]);
    expect(conv.dropped).toEqual({ "a repeated message id": 1 });
  });

  it("a cycle of replies is dropped and counted; the rest keeps its order", () => {
    const r = pruneTree([msg("root", null), msg("a", "root"), msg("b", "c"), msg("c", "b"), msg("d", "d")], "c");
    expect(r.messages.map((m) => m.ref)).toEqual(["root", "a"]);
    expect(r.dropped).toEqual({ "a cycle of replies": 3 });
    expect(r.activeRef).toBe("a"); // the pointer into the cycle falls back to the newest placed message
  });

  it("a hidden cycle above kept messages makes them roots", () => {
    const r = pruneTree([msg("h1", "h2", false), msg("h2", "h1", false), msg("k", "h1")], null);
    expect(r.messages.map((m) => [m.ref, m.parentRef])).toEqual([["k", null]]);
  });

  it("a long hidden chain above many visible children is walked once (20k + 20k nodes)", () => {
    const n = 20_000;
    const nodes: Array<ImportedMessage & { keep: boolean }> = [msg("top", null)];
    for (let i = 0; i < n; i++) nodes.push(msg(`h${i}`, i ? `h${i - 1}` : "top", false));
    for (let i = 0; i < n; i++) nodes.push(msg(`v${i}`, `h${n - 1}`));
    const r = pruneTree(nodes, `v${n - 1}`);
    expect(r.messages).toHaveLength(n + 1);
    expect(r.messages.slice(1).every((m) => m.parentRef === "top")).toBe(true);
    expect(r.activeRef).toBe(`v${n - 1}`);
  });

  it("more messages than any conversation has is refused as a whole", () => {
    const nodes = Array.from({ length: 100_001 }, (_, i) => msg(`m${i}`, i ? `m${i - 1}` : null));
    expect(() => pruneTree(nodes, null)).toThrow(/more than 100,000 messages/);
  });
});

describe("zip bombs", () => {
  const drain = async (it: AsyncIterable<unknown>) => {
    let n = 0;
    for await (const _ of it) n++;
    return n;
  };

  it("a zip that inflates past the import limit is refused while inflating", async () => {
    const zip = zipSync({ "conversations.json": strToU8(`[${" ".repeat(3 * 1024 * 1024)}]`) });
    expect(zip.length).toBeLessThan(64 * 1024);
    await expect(drain(unzipIfNeeded([zip], { maxInflatedBytes: 1024 * 1024 }))).rejects.toMatchObject({
      status: 413,
      message: expect.stringMatching(/import limit/),
    });
  });

  it("Claude's projects.json kept aside counts against the same limit", async () => {
    const zip = zipSync({
      "projects.json": strToU8(`[${" ".repeat(3 * 1024 * 1024)}]`),
      "conversations.json": strToU8("[]"),
    });
    const side: SideFiles = [];
    await expect(drain(unzipIfNeeded([zip], { maxInflatedBytes: 1024 * 1024 }, side))).rejects.toMatchObject({
      status: 413,
    });
    expect(side.flatMap((f) => f.chunks).reduce((n, c) => n + c.length, 0)).toBeLessThanOrEqual(1024 * 1024);
  });

  it("a zip far more compressed than any export (1,000×) is refused past 32 MB, under the size limit", async () => {
    const zip = zipSync({ "conversations.json": new Uint8Array(48 * 1024 * 1024).fill(32) });
    await expect(drain(unzipIfNeeded([zip], { maxInflatedBytes: 512 * 1024 * 1024 }))).rejects.toMatchObject({
      status: 413,
      message: expect.stringMatching(/100 times its compressed size/),
    });
  });

  it("an ordinary zipped export still reads whole", async () => {
    const body = JSON.stringify([
      { id: "z", title: "zipped", mapping: { r: node("r", null, "hello", []) }, current_node: "r" },
    ]);
    const entries = [];
    for await (const e of readExport(
      unzipIfNeeded([zipSync({ "x/conversations.json": strToU8(body) })], {
        maxInflatedBytes: 1e6,
      }),
    ))
      entries.push(e);
    expect(entries).toMatchObject([{ kind: "conversation", conversation: { title: "zipped" } }]);
  });
});

describe.each(engines)("one import at a time, side files bounded, on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  const newUser = async () =>
    userContext(t.db, (await t.db.user.create({ data: { email: `bounds-${crypto.randomUUID()}@example.com` } })).id);
  const chatgpt = [
    {
      id: "c1",
      title: "Garden",
      mapping: { a: node("a", null, "How deep do I plant tulips?") },
      current_node: "a",
    },
  ];

  it("a projects.json of 20 MB in a zip is left out unread, and the report says so; the conversations land", async () => {
    const u = await newUser();
    const huge = `[{"uuid":"p1","name":"x","docs":[{"content":"${"a".repeat(20 * 1024 * 1024)}"}]}]`;
    const zip = zipSync({ "conversations.json": strToU8(JSON.stringify(chatgpt)), "projects.json": strToU8(huge) });
    expect(zip.length).toBeLessThan(1024 * 1024); // it compresses to little: only inflating it costs
    const report = await importConversations(u, [zip]);
    expect(report.conversations).toBe(1);
    expect(report.skipped.reasons.map((r) => r.reason)).toContain("projects.json was over 16 MB: left out");
  });

  it("a second import of the same user while one runs is refused at once; the first lands, then another may run", async () => {
    const u = await newUser();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    async function* slow() {
      yield strToU8(JSON.stringify(chatgpt).slice(0, 10));
      await held;
      yield strToU8(JSON.stringify(chatgpt).slice(10));
    }
    const first = importConversations(u, slow());
    // Once the first holds its lease (it takes it before reading anything).
    for (let i = 0; i < 200 && !(await t.db.appSetting.findUnique({ where: { key: `import:${u.userId}` } })); i++)
      await new Promise((r) => setTimeout(r, 25));
    await expect(importConversations(u, [strToU8(JSON.stringify(chatgpt))])).rejects.toThrow(IMPORT_RUNNING);
    // Another user is not held up.
    expect((await importConversations(await newUser(), [strToU8(JSON.stringify(chatgpt))])).conversations).toBe(1);
    release();
    expect((await first).conversations).toBe(1);
    expect((await importConversations(u, [strToU8(JSON.stringify(chatgpt))])).duplicates).toBe(1);
  });
});
