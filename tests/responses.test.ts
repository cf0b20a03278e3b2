// The Responses and Conversations APIs, driven by clients nobody here wrote: the `openai` SDK's responses and
// conversations, and the Agents SDK with its defaults (the Responses API) and its own OpenAIConversationsSession,
// unmodified, against Mnemo's route handlers backed by the project's test model server.
import OpenAI from "openai";
import { z } from "zod";
import { vi } from "vitest";

// The route handlers read the app's database: here, the test's.
const state = vi.hoisted(() => ({ db: null as unknown }));
vi.mock("@/lib/db/client", () => ({ getDb: async () => state.db, getDatabase: async () => ({ prisma: state.db }) }));
import { Agent, Runner, setTracingDisabled, tool } from "@openai/agents";
import { MemorySession } from "@openai/agents";
import { OpenAIConversationsSession, OpenAIProvider, OpenAIResponsesCompactionSession } from "@openai/agents-openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { userContext, type UserContext } from "@/lib/user-context";
import { saveConnection, clearConnectionCache } from "@/lib/llm/connection";
import { addMemory } from "@/lib/memory/store";
import { createApiKey } from "@/lib/keys/api-keys";
import { listThreads, threadView } from "@/lib/chat/threads";
import * as responses from "@/app/v1/responses/route";
import * as responseById from "@/app/v1/responses/[id]/route";
import * as compact from "@/app/v1/responses/compact/route";
import * as conversations from "@/app/v1/conversations/route";
import * as conversationById from "@/app/v1/conversations/[id]/route";
import * as items from "@/app/v1/conversations/[id]/items/route";
import * as itemById from "@/app/v1/conversations/[id]/items/[itemId]/route";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const ROUTES: Array<[RegExp, string[], Record<string, unknown>]> = [
  [/^\/v1\/responses$/, [], responses],
  [/^\/v1\/responses\/compact$/, [], compact],
  [/^\/v1\/responses\/([^/]+)$/, ["id"], responseById],
  [/^\/v1\/conversations$/, [], conversations],
  [/^\/v1\/conversations\/([^/]+)$/, ["id"], conversationById],
  [/^\/v1\/conversations\/([^/]+)\/items$/, ["id"], items],
  [/^\/v1\/conversations\/([^/]+)\/items\/([^/]+)$/, ["id", "itemId"], itemById],
];

/** The Agents SDK's runner with its default model API (Responses), through `c`. */
const runnerFor = (c: OpenAI) =>
  new Runner({ modelProvider: new OpenAIProvider({ openAIClient: c, useResponses: true }) });

/** The real openai client, its requests answered by the route handlers in this process. */
function client(apiKey: string) {
  return new OpenAI({
    apiKey,
    baseURL: "http://mnemo.test/v1",
    maxRetries: 0,
    fetch: async (url, init) => {
      const req = new Request(String(url), init as RequestInit);
      const path = new URL(req.url).pathname;
      for (const [re, names, mod] of ROUTES) {
        const m = re.exec(path);
        const handler = m && (mod[req.method] as Handler | undefined);
        if (!m || !handler) continue;
        const params = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1])]));
        return handler(req, { params: Promise.resolve(params) });
      }
      return new Response(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }), { status: 404 });
    },
  });
}

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
  setTracingDisabled(true);
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

type Sent = Array<{ role: string; content: string | null; tool_call_id?: string; tool_calls?: unknown[] }>;
const lastChat = () =>
  mock
    .chatRequests()
    .filter((r) => r.body.model === "mock-chat")
    .at(-1)!.body;

describe.each(engines)("the Responses and Conversations APIs on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  beforeEach(() => {
    state.db = t.db;
  });

  async function newUser(): Promise<{ u: UserContext; key: string }> {
    const id = (await t.db.user.create({ data: { email: `resp-${engine}-${n++}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, id);
    clearConnectionCache(t.db);
    const u = await userContext(t.db, id);
    const { key } = await createApiKey(u, { name: "agent", scopes: ["chat", "memory:write"] });
    return { u, key };
  }

  it("responses.create: the memory block reaches the model, the answer is stored and retrievable, and continues", async () => {
    const { u, key } = await newUser();
    await addMemory(u, { text: "Allergic to peanuts", source: "explicit" }, "user", "said so");
    const c = client(key);
    mock.script({ content: "Try the lentil curry." });
    const r = await c.responses.create({ model: "mnemo", instructions: "Be brief.", input: "Dinner idea for me?" });
    expect(r).toMatchObject({ object: "response", status: "completed" });
    expect(r.output_text).toBe("Try the lentil curry.");
    const sent = lastChat().messages as Sent;
    expect(sent[0]).toMatchObject({ role: "system" });
    expect(sent[0].content).toMatch(/^Be brief\.\n\n<user_memory>[\s\S]*Allergic to peanuts/);
    expect((await listThreads(u, {})).threads.map((x) => x.via)).toEqual(["agent"]);
    expect((await c.responses.retrieve(r.id)).output_text).toBe("Try the lentil curry.");

    // previous_response_id: the thread replays up to that answer; the new turn goes in the same thread.
    mock.script({ content: "Then the chickpea one." });
    const next = await c.responses.create({ model: "mnemo", previous_response_id: r.id, input: "Something else?" });
    expect(next.output_text).toBe("Then the chickpea one.");
    const replay = (lastChat().messages as Sent).map((m) => [m.role, m.content]);
    expect(replay.slice(1)).toEqual([
      ["user", "Dinner idea for me?"],
      ["assistant", "Try the lentil curry."],
      ["user", "Something else?"],
    ]);
    expect((await listThreads(u, {})).threads).toHaveLength(1);
    // Deleting: not while a reply follows it; the last one goes.
    await expect(c.responses.delete(r.id)).rejects.toMatchObject({ status: 409 });
    await c.responses.delete(next.id);
    await expect(c.responses.retrieve(next.id)).rejects.toMatchObject({ status: 404 });
    // Another user's key does not reach it.
    const stranger = await newUser();
    await expect(client(stranger.key).responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
  });

  it("streamed: OpenAI's event sequence, text deltas, the final response; a cut stream is an error event", async () => {
    const { key } = await newUser();
    const c = client(key);
    mock.script({ content: "One two three" });
    const stream = await c.responses.create({ model: "mnemo", input: "Count", stream: true });
    const types: string[] = [];
    let text = "";
    let final: OpenAI.Responses.Response | null = null;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
      if (e.type === "response.completed") final = e.response;
    }
    expect(text).toBe("One two three");
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_item.added");
    expect(types.at(-1)).toBe("response.completed");
    expect(final!.output_text ?? (final!.output[0] as { content: Array<{ text: string }> }).content[0].text).toBe(
      "One two three",
    );
    mock.script({ content: "a b c d e f g", chunkDelayMs: 5, dropAfterChunks: 2 });
    const cut = await c.responses.create({ model: "mnemo", input: "Go on", stream: true });
    await expect(
      (async () => {
        for await (const e of cut) void e;
      })(),
    ).rejects.toThrow(/cut the connection/);
  });

  it("the Agents SDK with its defaults: a function tool, outputType, streamed and not", async () => {
    const { key } = await newUser();
    const runner = runnerFor(client(key));
    const weather = tool({
      name: "get_weather",
      description: "The weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `Sunny in ${city}`,
    });
    const agent = new Agent({ name: "Helper", instructions: "Be brief.", model: "mock-chat", tools: [weather] });
    mock.script(
      { match: "weather in Porto", toolCalls: [{ name: "get_weather", arguments: { city: "Porto" }, id: "call_w1" }] },
      { match: "weather in Porto", content: "It is sunny in Porto." },
    );
    const result = await runner.run(agent, "What is the weather in Porto?");
    expect(result.finalOutput).toBe("It is sunny in Porto.");
    const replay = lastChat().messages as Sent;
    expect(replay.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_w1", content: "Sunny in Porto" });

    mock.script({ match: "streamed weather", content: "Sunny, streamed." });
    const streamed = await runner.run(agent, "streamed weather please", { stream: true });
    let deltas = "";
    for await (const e of streamed)
      if (e.type === "raw_model_stream_event" && e.data.type === "output_text_delta") deltas += e.data.delta;
    await streamed.completed;
    expect(streamed.finalOutput).toBe("Sunny, streamed.");
    expect(deltas).toBe("Sunny, streamed.");

    const typed = new Agent({
      name: "Extractor",
      model: "mock-chat",
      outputType: z.object({ city: z.string(), sunny: z.boolean() }),
    });
    mock.script({ match: "extract", content: '{"city":"Porto","sunny":true}' });
    const out = await runner.run(typed, "extract: it is sunny in Porto");
    expect(out.finalOutput).toEqual({ city: "Porto", sunny: true });
    expect(lastChat().response_format).toMatchObject({
      type: "json_schema",
      json_schema: { schema: expect.any(Object) },
    });
  });

  it("the Agents SDK's own OpenAIConversationsSession keeps an agent's history in a Mnemo thread", async () => {
    const { u, key } = await newUser();
    const c = client(key);
    const session = new OpenAIConversationsSession({ client: c });
    await session.addItems([
      { type: "message", role: "user", content: "I live in Porto" },
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Noted." }] },
    ]);
    const id = await session.getSessionId();
    expect(id).toMatch(/^conv_/);
    expect((await session.getItems()).map((i) => ("role" in i ? i.role : i.type))).toEqual(["user", "assistant"]);
    expect(await session.getItems(1)).toHaveLength(1);
    const popped = await session.popItem();
    expect(popped).toMatchObject({ role: "assistant" });
    expect(await session.getItems()).toHaveLength(1);

    // A run with the session: the history goes to the model, the new items come back into the conversation.
    const runner = runnerFor(c);
    const weather = tool({
      name: "get_weather",
      description: "The weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `Rainy in ${city}`,
    });
    const agent = new Agent({ name: "Helper", model: "mock-chat", tools: [weather] });
    mock.script(
      {
        match: "weather where I live",
        toolCalls: [{ name: "get_weather", arguments: { city: "Porto" }, id: "call_p" }],
      },
      { match: "weather where I live", content: "Rainy in Porto." },
    );
    const result = await runner.run(agent, "What is the weather where I live?", { session });
    expect(result.finalOutput).toBe("Rainy in Porto.");
    expect((lastChat().messages as Sent).some((m) => m.content === "I live in Porto")).toBe(true);
    expect((await session.getItems()).map((i) => ("role" in i ? i.role : i.type))).toEqual([
      "user",
      "user",
      "function_call",
      "function_call_result",
      "assistant",
    ]);
    // The next run replays the call and its result from the conversation.
    mock.script({ match: "umbrella", content: "Yes, take one." });
    await runner.run(agent, "Do I need an umbrella?", { session });
    expect((lastChat().messages as Sent).find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_p" });
    // The conversation is a thread of the key's user, via the key.
    const listed = (await listThreads(u, {})).threads.filter((x) => x.via === "agent");
    expect(listed.length).toBeGreaterThanOrEqual(1);

    await session.clearSession();
    await expect(c.conversations.retrieve(id)).rejects.toMatchObject({ status: 404 });
    const other = await newUser();
    const fresh = await c.conversations.create({ items: [{ type: "message", role: "user", content: "mine" }] });
    await expect(client(other.key).conversations.items.list(fresh.id)).rejects.toMatchObject({ status: 404 });
  });

  it("the Agents SDK's own OpenAIResponsesCompactionSession: compaction is Mnemo's rolling summary of the thread", async () => {
    const { u, key } = await newUser();
    const c = client(key);
    const runner = runnerFor(c);
    const session = new OpenAIResponsesCompactionSession({
      client: c,
      model: "gpt-4o-mini", // the SDK checks for an OpenAI model name; Mnemo answers with its configured model
      underlyingSession: new MemorySession(),
      shouldTriggerCompaction: () => true,
    });
    const agent = new Agent({ name: "Helper", model: "mock-chat" });
    mock.script(
      { match: "planning a trip", content: "Lisbon in May is lovely." },
      { system: "running summary", content: "The user plans a trip to Lisbon in May." },
    );
    await runner.run(agent, "I am planning a trip to Lisbon in May", { session });
    const kept = await session.getItems();
    expect(kept.map((i) => i.type)).toEqual(["message", "compaction"]);
    const thread = (await listThreads(u, {})).threads[0];
    const summary = await t.db.summary.findFirstOrThrow({ where: { threadId: thread.id } });
    expect(u.cipher.open(summary.content)).toBe("The user plans a trip to Lisbon in May.");
    // Shown in the thread, after the answer it covers.
    const view = await threadView(u, thread.id);
    expect(view.summary).toMatchObject({ content: "The user plans a trip to Lisbon in May." });
    expect(view.items.at(-1)!.id).toBe(view.summary!.throughItemId);

    mock.script({ match: "which month", content: "May." });
    await runner.run(agent, "Remind me, which month?", { session });
    const sent = lastChat().messages as Sent;
    expect(sent.filter((m) => m.role === "system")).toHaveLength(1);
    expect(sent[0].content).toContain("The user plans a trip to Lisbon in May.");
    expect(sent.at(-1)).toMatchObject({ role: "user", content: "Remind me, which month?" });
  });
});
