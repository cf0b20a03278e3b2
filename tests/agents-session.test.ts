// A Mnemo thread as an OpenAI Agents SDK session: the real SDK's run() against
// the project's test server, with history in Mnemo (MnemoSession) and Mnemo's
// memory as tools.
import { execFile } from "node:child_process";
import { userContext } from "@/lib/user-context";
import { promisify } from "node:util";
import OpenAI from "openai";
import { Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { MnemoSession } from "@/lib/agents/mnemo-session";
import { mnemoMemoryTools } from "@/lib/agents/memory-tools";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
  setDefaultOpenAIClient(new OpenAI({ baseURL: mock.url, apiKey: "test-key" }));
  setOpenAIAPI("chat_completions");
  setTracingDisabled(true);
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const sent = () => JSON.stringify(mock.chatRequests().at(-1)!.body.messages);

describe.each(engines)("Agents SDK session on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  it("carries history across sessions opened separately, pops and clears, and refuses another user's thread", async () => {
    const user = (await t.db.user.create({ data: { email: `agent-${engine}@example.com` } })).id;
    const agent = new Agent({ name: "Helper", instructions: "Be brief.", model: "mock-chat" });
    const first = await MnemoSession.open(t.db, user);
    await run(agent, "My favourite city is Ghent", { session: first });

    // Another process: its own database client, the same thread id.
    const other = t.engine === "postgres" ? await t.newClient() : { db: t.db, close: async () => {} };
    try {
      const again = await MnemoSession.open(other.db, user, await first.getSessionId());
      await run(agent, "Which city do I like best?", { session: again });
      expect(sent()).toContain("My favourite city is Ghent");
      const items = await again.getItems();
      expect(items.map((i) => ("role" in i ? i.role : i.type))).toEqual(["user", "assistant", "user", "assistant"]);
      expect(await again.getItems(2)).toEqual(items.slice(2));

      const popped = await again.popItem();
      expect(popped).toMatchObject({ role: "assistant" });
      expect(await again.getItems()).toHaveLength(3);
      // The app sees the same thread.
      expect(await t.db.item.count({ where: { threadId: await again.getSessionId() } })).toBe(3);

      const stranger = (await t.db.user.create({ data: { email: `stranger-${engine}@example.com` } })).id;
      await expect(MnemoSession.open(t.db, stranger, await first.getSessionId())).rejects.toThrow(/not found/i);

      await again.clearSession();
      expect(await again.getItems()).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it.runIf(engine === "postgres")("carries history into a separate OS process on the same database", async () => {
    const user = (await t.db.user.create({ data: { email: `process-${engine}@example.com` } })).id;
    const session = await MnemoSession.open(t.db, user);
    await run(
      new Agent({ name: "Helper", instructions: "Be brief.", model: "mock-chat" }),
      "My favourite river is the Douro",
      { session },
    );
    // Asynchronously: the model server the child calls runs in this process.
    const { stdout: out } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "testing/agent-run.ts", "Which river do I like?"],
      {
        env: {
          ...process.env,
          DATABASE_URL: t.url!,
          MOCK_LLM_URL: mock.url,
          MNEMO_USER_ID: user,
          MNEMO_THREAD_ID: await session.getSessionId(),
        },
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    const items = JSON.parse(out.trim().split("\n").at(-1)!) as Array<{ role?: string }>;
    expect(items.map((i) => i.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(sent()).toContain("My favourite river is the Douro"); // the child's request carried this process's history
    expect(await session.getItems()).toHaveLength(4); // and this process sees what the child added
  });

  it("tool calls round-trip through the session, and the memory tools act for that user only", async () => {
    const user = (await t.db.user.create({ data: { email: `tools-${engine}@example.com` } })).id;
    const agent = new Agent({
      name: "Helper",
      instructions: "Be brief.",
      model: "mock-chat",
      tools: mnemoMemoryTools(await userContext(t.db, user)),
    });
    mock.script(
      {
        match: "remember that I am vegetarian",
        toolCalls: [{ name: "remember", arguments: { text: "Is vegetarian", kind: "preference" }, id: "call_veg" }],
      },
      { match: "remember that I am vegetarian", content: "Saved." },
    );
    const session = await MnemoSession.open(t.db, user);
    const result = await run(agent, "Please remember that I am vegetarian", { session });
    expect(result.finalOutput).toBe("Saved.");
    const memories = await t.db.memory.findMany({ where: { userId: user } });
    expect(memories.map((m) => [m.text, m.source])).toEqual([["Is vegetarian", "explicit"]]);

    const items = await session.getItems();
    expect(items.map((i) => ("role" in i ? i.role : i.type))).toEqual([
      "user",
      "function_call",
      "function_call_result",
      "assistant",
    ]);
    expect(items[1]).toMatchObject({ type: "function_call", callId: "call_veg", name: "remember" });

    // The next run replays the call and its output to the model.
    mock.script(
      { match: "what do I eat", toolCalls: [{ name: "recall_memory", arguments: { query: "diet" }, id: "call_diet" }] },
      { match: "what do I eat", content: "Vegetarian food." },
    );
    await run(agent, "So what do I eat?", { session });
    const messages = mock.chatRequests().at(-1)!.body.messages as Array<{
      role: string;
      tool_call_id?: string;
      content?: string;
    }>;
    expect(messages.some((m) => m.role === "tool" && m.tool_call_id === "call_veg")).toBe(true);
    expect(messages.find((m) => m.role === "tool" && m.tool_call_id === "call_diet")?.content).toContain(
      "Is vegetarian",
    );
  });

  it("two concurrent runs on one session keep each run's items together", async () => {
    const user = (await t.db.user.create({ data: { email: `concurrent-${engine}@example.com` } })).id;
    const agent = new Agent({ name: "Helper", instructions: "Be brief.", model: "mock-chat" });
    const session = await MnemoSession.open(t.db, user);
    // The first run's answer is slow, so the second starts and finishes while it waits.
    mock.script(
      { match: "first question", content: "First answer.", delayMs: 300 },
      { match: "second question", content: "Second answer." },
    );
    await Promise.all([run(agent, "first question", { session }), run(agent, "second question", { session })]);
    const texts = (await session.getItems()).map((i) => {
      if ("role" in i && typeof i.content === "string") return i.content;
      if ("role" in i && Array.isArray(i.content))
        return (i.content as Array<{ text?: string }>).map((c) => c.text).join("");
      return "";
    });
    expect([texts.slice(0, 2), texts.slice(2)].map((pair) => pair.join(" | ")).sort()).toEqual([
      "first question | First answer.",
      "second question | Second answer.",
    ]);
  });
});
