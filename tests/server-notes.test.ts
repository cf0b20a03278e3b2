// What one app instance learns about the model server (a feature it refuses, how much of a prompt it reads), the
// others know: a second process on the same PostgreSQL database sends its first request as the first instance
// learned to, and the admin's save in one instance makes every other try the server afresh.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTurn } from "@/lib/chat/turn";
import { createThread } from "@/lib/chat/threads";
import { appendItems, type NewItem } from "@/lib/memory/session";
import { addMemory } from "@/lib/memory/store";
import { userContext } from "@/lib/user-context";
import { clearConnectionCache } from "@/lib/llm/connection";
import { forgetRefusals, knownToRefuse, rememberRefusal } from "@/lib/llm/server-quirks";
import { forgetEverywhere, syncNotes } from "@/lib/llm/server-notes";
import { forgetPromptLimits, knownPromptLimit } from "@/lib/llm/prompt-limits";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm, type RecordedRequest } from "@/testing/mock-llm";
import { connectToMock } from "@/testing/mock-connection";
import { collect } from "./helpers/turns";

type Body = { messages: Array<{ role: string; content: string }>; tools?: unknown[] };
const lastOf = (r: RecordedRequest) => (r.body as Body).messages.at(-1)?.content ?? "";
/** How long a request is as the mock server counts it (a quarter of the characters of its messages and tools). */
const serverTokens = (r: RecordedRequest) => {
  const b = r.body as Body;
  const chars = b.messages.reduce((n, m) => n + String(m.content ?? "").length, 0);
  return Math.ceil(chars / 4) + (b.tools?.length ? Math.ceil(JSON.stringify(b.tools).length / 4) : 0);
};

describe.skipIf(!engines.includes("postgres"))("what the model server taught one instance, on PostgreSQL", () => {
  let t: TestDb;
  let mock: MockLlm;
  beforeAll(async () => {
    mock = await startMockLlm();
    t = await createTestDb("postgres");
    await connectToMock(t.db, mock.url, "server-notes");
  });
  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });

  /** One step in another process (testing/instance-run.ts); the model server it calls runs in this one. */
  const otherInstance = async (...args: string[]) =>
    (
      await promisify(execFile)(process.execPath, ["--import", "tsx", "testing/instance-run.ts", ...args], {
        env: { ...process.env, DATABASE_URL: t.url! },
        encoding: "utf8",
        timeout: 60_000,
      })
    ).stdout;
  const asked = (content: string, from = 0) =>
    mock
      .chatRequests()
      .slice(from)
      .filter((r) => lastOf(r) === content);

  it("a second instance sends its first request without the refused tools and within what the server reads", async () => {
    // Ollama at its defaults for a model without tool calling: tools refused, a long prompt cut silently.
    mock.refuseTools = true;
    mock.contextLength = 2500;
    mock.overflow = "ollama-shift";
    forgetRefusals();
    forgetPromptLimits();
    const user = (await t.db.user.create({ data: { email: "server-notes@example.com" } })).id;
    const u = await userContext(t.db, user);
    await addMemory(u, { text: "Has a golden retriever named Max", source: "explicit" }, "user", "said so");
    const thread = await createThread(u);
    const items: NewItem[] = [];
    for (let i = 0; i < 12; i++)
      items.push(
        { role: "user", content: `Part ${i} of my travel notes: ${"we walked along the river and ".repeat(25)}` },
        { role: "assistant", content: `Noted part ${i}: ${"a lovely walk by the water, ".repeat(25)}` },
      );
    await appendItems(t.db, thread.id, items, { cipher: u.cipher });

    // The other instance learns it the hard way: refused with the tools, then the prompt cut.
    const first = JSON.parse(await otherInstance("turn", user, thread.id, "What should I name my next dog?"));
    expect(first).toMatchObject({ type: "done", item: { status: "complete" } });
    const theirs = asked("What should I name my next dog?");
    expect(theirs.map((r) => Array.isArray((r.body as Body).tools))).toEqual([true, false]);
    expect(first.item.error).toMatch(/^The model server read only/);

    // This instance has not called the server: it learns from the table, when it next reads the connection.
    expect(knownPromptLimit({ baseURL: mock.url }, "mock-chat")).toBeNull();
    clearConnectionCache(t.db);
    const from = mock.chatRequests().length;
    const events = await collect(runTurn(t.db, user, { kind: "send", threadId: thread.id, content: "And a cat?" }));
    expect(events.at(-1)).toMatchObject({ type: "done", item: { status: "complete", error: null } });
    const mine = asked("And a cat?", from);
    expect(mine).toHaveLength(1);
    expect((mine[0].body as Body).tools).toBeUndefined();
    expect(serverTokens(mine[0])).toBeLessThanOrEqual(2500);
    expect((mine[0].body as Body).messages[0].content).toContain("Has a golden retriever named Max");

    // The admin saves the model settings on the other instance (say, the model now has a longer context): this one
    // tries the server afresh, with the tools and the whole history.
    mock.refuseTools = false;
    mock.contextLength = 0;
    await otherInstance("forget");
    clearConnectionCache(t.db);
    const again = mock.chatRequests().length;
    await collect(runTurn(t.db, user, { kind: "send", threadId: thread.id, content: "And a parrot?" }));
    const fresh = asked("And a parrot?", again);
    expect(fresh).toHaveLength(1);
    expect(Array.isArray((fresh[0].body as Body).tools)).toBe(true);
    expect(JSON.stringify(fresh[0].body)).toContain("Part 0 of my travel notes");
  });
});

describe.each(engines)("the admin's save and later notes, on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  it("a note learned after the save is kept; one from before it, written by another instance, is not taken", async () => {
    const conn = { baseURL: "http://llm.test/v1" };
    forgetRefusals();
    await syncNotes(t.db); // this process's database, as reading the connection names it
    const saved = Date.now();
    await forgetEverywhere(t.db);
    // Another instance's note from before the save reaches the table late (its write was slow).
    await t.db.$executeRaw`INSERT INTO "ModelServerNote" (server, kind, tokens, at)
      VALUES ('http://llm.test/v1|old', 'refused:tools', NULL, ${new Date(saved - 1000)}::timestamp)`;
    await new Promise((r) => setTimeout(r, 5));
    rememberRefusal("tools", conn, "new");
    await syncNotes(t.db);
    await syncNotes(t.db);
    expect(knownToRefuse("tools", conn, "new")).toBe(true);
    expect(knownToRefuse("tools", conn, "old")).toBe(false);
    // What this instance learned went to the table for the others.
    const rows = await t.db.modelServerNote.findMany({ where: { kind: "refused:tools" }, orderBy: { server: "asc" } });
    expect(rows.map((r) => r.server)).toEqual(["http://llm.test/v1|new", "http://llm.test/v1|old"]);
  });
});
