// The OpenAI-compatible API (/v1) with personal API keys: the real `openai` client against the real route handlers
// (its fetch calls them in-process), the real database, and the test model server behind them.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

const state = vi.hoisted(() => ({ db: null as unknown }));
vi.mock("@/lib/db/client", () => ({ getDb: async () => state.db, getDatabase: async () => ({ prisma: state.db }) }));

import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm, type RecordedRequest } from "@/testing/mock-llm";
import { userContext, inMemoryScope, type UserContext } from "@/lib/user-context";
import { saveConnection, clearConnectionCache, saveModelList } from "@/lib/llm/connection";
import { addMemory } from "@/lib/memory/store";
import { createApiKey, revokeApiKey } from "@/lib/keys/api-keys";
import { createProject } from "@/lib/projects/projects";
import { exactScope } from "@/lib/projects/scope";
import { listThreads } from "@/lib/chat/threads";
import { exportUserData } from "@/lib/account/export";
import { runDueJobs } from "@/lib/jobs/worker";
import * as models from "@/app/v1/models/route";
import * as completions from "@/app/v1/chat/completions/route";
import * as mcp from "@/app/mcp/route";
import * as modelById from "@/app/v1/models/[id]/route";
import * as embeddings from "@/app/v1/embeddings/route";
import * as unknownPath from "@/app/v1/[...path]/route";
import * as wellKnown from "@/app/.well-known/[...path]/route";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { appendItems } from "@/lib/memory/session";
import { whereMemoriesWent } from "@/lib/memory/disclosure";
import { forgetPromptLimits } from "@/lib/llm/prompt-limits";
import { countTokens } from "@/lib/memory/tokens";

/** The real client, its requests answered by the route handlers. */
function client(apiKey: string) {
  return new OpenAI({
    apiKey,
    baseURL: "http://mnemo.test/v1",
    maxRetries: 0,
    fetch: async (url, init) => {
      const req = new Request(String(url), init as RequestInit);
      const path = new URL(req.url).pathname;
      if (path === "/v1/models") return models.GET(req);
      if (path === "/v1/chat/completions") return completions.POST(req);
      if (path === "/v1/embeddings") return embeddings.POST(req);
      const id = /^\/v1\/models\/([^/]+)$/.exec(path)?.[1];
      if (id) return modelById.GET(req, { params: Promise.resolve({ id: decodeURIComponent(id) }) });
      return (unknownPath as unknown as Record<string, (r: Request) => Promise<Response>>)[req.method](req);
    },
  });
}

describe.each(engines)("the OpenAI-compatible API on %s", (engine) => {
  let t: TestDb;
  let mock: MockLlm;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
    state.db = t.db;
    mock = await startMockLlm();
  });
  afterAll(async () => {
    await mock?.close();
    await t?.close();
  });
  beforeEach(() => {
    mock.reset();
    forgetPromptLimits();
  });

  async function newUser(): Promise<UserContext> {
    const id = (await t.db.user.create({ data: { email: `api-${engine}-${n++}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, id);
    clearConnectionCache(t.db);
    return userContext(t.db, id);
  }
  const answerRequest = () => mock.chatRequests().find((r) => r.body.model === "mock-chat");

  it("non-streaming: the memory block reaches the model; the exchange is a thread via the key; a follow-up continues it", async () => {
    const u = await newUser();
    await addMemory(u, { text: "Allergic to peanuts", source: "explicit" }, "user", "said so");
    const { key } = await createApiKey(u, { name: "laptop", scopes: ["chat", "memory:write"] });
    mock.script({ content: "Skip the satay." });
    const first = [
      { role: "system" as const, content: "You are a cooking helper." },
      { role: "user" as const, content: "Any peanut-free snack ideas?" },
    ];
    const r = await client(key).chat.completions.create({ model: "mnemo", messages: first });
    expect(r.object).toBe("chat.completion");
    expect(r.choices[0].message.content).toBe("Skip the satay.");
    const sent = answerRequest()!.body.messages as Array<{ role: string; content: string }>;
    // Added to the client's own system message (one system message suits every chat template), after its words.
    expect(sent.filter((m) => m.role === "system")).toHaveLength(1);
    expect(sent[0].content).toMatch(/^You are a cooking helper\.\n\n<user_memory>/);
    expect(sent[0].content).toContain("Allergic to peanuts");
    expect(sent.at(-1)!.content).toBe("Any peanut-free snack ideas?");
    const { threads } = await listThreads(u, {});
    expect(threads).toHaveLength(1);
    expect(threads[0].via).toBe("laptop");
    // The client sends the whole conversation again: the same thread, only the new message and answer are added.
    mock.script({ content: "Apples with sunflower butter." });
    await client(key).chat.completions.create({
      model: "mnemo",
      messages: [...first, { role: "assistant", content: "Skip the satay." }, { role: "user", content: "And sweet?" }],
    });
    expect((await listThreads(u, {})).threads).toHaveLength(1);
    const items = await t.db.item.findMany({ where: { threadId: threads[0].id }, orderBy: { position: "asc" } });
    expect(items.map((i) => [i.role, i.content])).toEqual([
      ["user", "Any peanut-free snack ideas?"],
      ["assistant", "Skip the satay."],
      ["user", "And sweet?"],
      ["assistant", "Apples with sunflower butter."],
    ]);
    // Learning follows: the extraction job is queued for each exchange.
    expect(await t.db.job.count({ where: { userId: u.userId, kind: "extract" } })).toBe(2);
  });

  it("a key with only the chat scope teaches nothing: learning from its conversations needs memory:write", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "chat-only", scopes: ["chat"] });
    mock.script({ content: "Noted." });
    await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Remember that my sister Ines lives in Braga." }],
    });
    expect(await t.db.item.count({ where: { userId: u.userId } })).toBe(2); // the exchange is kept
    expect(await t.db.job.count({ where: { userId: u.userId, kind: "extract" } })).toBe(0);
  });

  it("null wherever OpenAI's schema allows it is taken as not set; the legacy function role is a tool result", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "py", scopes: ["chat"] });
    mock.script({ content: "Fine." });
    const r = await client(key).chat.completions.create({
      model: "mnemo",
      messages: [
        { role: "user", content: "What is the weather?", name: null },
        {
          role: "assistant",
          content: null,
          function_call: { name: "weather", arguments: '{"city":"Porto"}' },
        } as never,
        { role: "function", name: "weather", content: "Sunny, 24 °C" },
        { role: "user", content: "So, shorts?", tool_calls: null } as never,
      ],
      temperature: null,
      top_p: null,
      max_tokens: null,
      max_completion_tokens: null,
      stop: null,
      tools: null,
      user: null,
      stream: null,
      stream_options: null,
    } as never);
    expect((r as OpenAI.Chat.Completions.ChatCompletion).choices[0].message.content).toBe("Fine.");
    const sent = answerRequest()!.body;
    for (const k of ["temperature", "top_p", "max_tokens", "stop", "tools", "user"]) expect(sent).not.toHaveProperty(k);
    const msgs = sent.messages as Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
    const call = msgs.find((m) => m.role === "assistant")!.tool_calls![0];
    expect(msgs.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: call.id, content: "Sunny, 24 °C" });
  });

  it("parameters reach the model server as sent; what cannot be honoured is a 400, never dropped", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "lc", scopes: ["chat"] });
    mock.script({ content: '{"city":"Porto"}' });
    const schema = { name: "place", schema: { type: "object", properties: { city: { type: "string" } } } };
    await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Where do I live?" }],
      response_format: { type: "json_schema", json_schema: schema },
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      logit_bias: { "50256": -100 },
      logprobs: true,
      top_logprobs: 2,
      parallel_tool_calls: false,
      n: 2,
    });
    expect(answerRequest()!.body).toMatchObject({
      response_format: { type: "json_schema", json_schema: schema },
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      logit_bias: { "50256": -100 },
      logprobs: true,
      top_logprobs: 2,
      parallel_tool_calls: false,
      n: 2,
    });
    const streamed = client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Two at once?" }],
      n: 2,
      stream: true,
    });
    await expect(streamed).rejects.toMatchObject({ status: 400, message: expect.stringContaining("n greater than 1") });
    // The model server refusing a parameter: its words, as a 400 the client can act on.
    mock.script({ status: 400, errorMessage: "response_format json_schema is not supported by this model" });
    await expect(
      client(key).chat.completions.create({
        model: "mnemo",
        messages: [{ role: "user", content: "Again" }],
        response_format: { type: "json_object" },
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining("json_schema is not supported") });
  });

  it("/v1/embeddings: the embedding model's vectors, as float or base64 (the SDK's default), counted in the ledger", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "rag", scopes: ["chat"] });
    // With no embedding model and the built-in encoder off, it says what to set.
    await expect(client(key).embeddings.create({ model: "mnemo", input: "hello" })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("Embeddings are off"),
    });
    await saveConnection(
      t.db,
      { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory", embeddingModel: "mock-embed" },
      u.userId,
    );
    clearConnectionCache(t.db);
    const asFloat = await client(key).embeddings.create({
      model: "mnemo",
      input: ["a fig tree", "the balcony"],
      encoding_format: "float",
    });
    expect(asFloat).toMatchObject({ object: "list", model: "mock-embed" });
    expect(asFloat.data.map((d) => d.index)).toEqual([0, 1]);
    const dims = asFloat.data[0].embedding.length;
    expect(dims).toBeGreaterThan(0);
    // The openai SDK asks for base64 unless told otherwise, and decodes it: the same numbers (as float32).
    const decoded = await client(key).embeddings.create({ model: "mnemo", input: ["a fig tree", "the balcony"] });
    expect(decoded.data[0].embedding).toHaveLength(dims);
    expect(decoded.data[0].embedding[0]).toBeCloseTo(asFloat.data[0].embedding[0], 5);
    const day = await t.db.usageDay.findFirstOrThrow({ where: { userId: u.userId } });
    expect(day.embeddingCalls).toBe(2);
    await expect(
      client(key).embeddings.create({ model: "mnemo", input: "hi", dimensions: dims + 1, encoding_format: "float" }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringContaining(`${dims} dimensions`) });
    await expect(client(key).embeddings.create({ model: "mnemo", input: [[1, 2, 3]] })).rejects.toMatchObject({
      status: 400,
    });
  });

  it("the admin's model list: /v1/models lists it, a listed model answers, an unknown one is OpenAI's 404 and stores nothing", async () => {
    const u = await newUser();
    await saveModelList(
      t.db,
      { models: [{ id: "mock-chat" }, { id: "mock-alt", label: "Alt", vision: true }], defaultId: "mock-chat" },
      u.userId,
    );
    clearConnectionCache(t.db);
    try {
      const { key } = await createApiKey(u, { name: "picker", scopes: ["chat"] });
      const list = await client(key).models.list();
      expect(list.data.map((m) => m.id)).toEqual(["mock-chat", "mock-alt"]);
      expect(await client(key).models.retrieve("mock-alt")).toMatchObject({ id: "mock-alt" });
      mock.script({ content: "From the alternative." });
      const r = await client(key).chat.completions.create({
        model: "mock-alt",
        messages: [{ role: "user", content: "hi" }],
      });
      expect(r.model).toBe("mock-alt");
      expect(mock.chatRequests().at(-1)?.body.model).toBe("mock-alt");
      const stored = await t.db.item.findFirstOrThrow({ where: { userId: u.userId, role: "assistant" } });
      expect(stored.model).toBe("mock-alt");
      // "mnemo" is the default's other name.
      await client(key).chat.completions.create({ model: "mnemo", messages: [{ role: "user", content: "again" }] });
      expect(mock.chatRequests().at(-1)?.body.model).toBe("mock-chat");
      const before = await t.db.item.count({ where: { userId: u.userId } });
      const sent = mock.chatRequests().length;
      const refused = await client(key)
        .chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "hello?" }] })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
      expect(refused).toMatchObject({ status: 404, code: "model_not_found" });
      expect(String((refused as Error).message)).toContain("gpt-9");
      expect(await t.db.item.count({ where: { userId: u.userId } })).toBe(before);
      expect(mock.chatRequests().length).toBe(sent);
      await expect(client(key).models.retrieve("gpt-9")).rejects.toMatchObject({
        status: 404,
        code: "model_not_found",
      });
    } finally {
      await t.db.appSetting.deleteMany({ where: { key: "chat-models" } });
      clearConnectionCache(t.db);
    }
  });

  it("GET /v1/models/{id} and any other /v1 path answer in OpenAI's JSON shape", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "sdk", scopes: ["chat"] });
    expect(await client(key).models.retrieve("mock-chat")).toMatchObject({ id: "mock-chat", object: "model" });
    await expect(client(key).models.retrieve("gpt-9")).rejects.toMatchObject({ status: 404 });
    const missing = await unknownPath.POST(
      new Request("http://mnemo.test/v1/completions", { method: "POST", body: "{}" }),
    );
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/json");
    expect((await missing.json()).error).toMatchObject({ type: "not_found_error", message: expect.any(String) });
  });

  it("a model server that cuts its stream: the client is told so, and the partial answer is kept as interrupted", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "cut", scopes: ["chat", "memory:write"] });
    mock.script({ content: "One two three four five six seven eight nine ten", chunkDelayMs: 1, dropAfterChunks: 3 });
    const stream = await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Count to ten" }],
      stream: true,
    });
    let text = "";
    const failed = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    })().catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(String((failed as Error).message)).not.toMatch(/Something went wrong|reference/);
    expect(text.length).toBeGreaterThan(0);
    const answer = await t.db.item.findFirstOrThrow({ where: { userId: u.userId, role: "assistant" } });
    expect(answer).toMatchObject({ status: "interrupted", content: text.trim() });
    expect(String((failed as Error).message)).toMatch(/model server at 127\.0\.0\.1:\d+ cut the connection/);
    // Nothing is learned from half an answer.
    expect(await t.db.job.count({ where: { userId: u.userId, kind: "extract" } })).toBe(0);
  });

  it("streaming: chat.completion.chunk events, usage when asked, citations removed; models lists the model", async () => {
    const u = await newUser();
    await addMemory(u, { text: "Has a dog named Rex", source: "explicit" }, "user", "said so");
    const { key } = await createApiKey(u, { name: "script", scopes: ["chat"] });
    mock.script({ content: "Rex would love a walk [memory: Has a dog named Rex] today.", chunkDelayMs: 1 });
    const stream = await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "What should I do with my dog this weekend?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage = false;
    for await (const chunk of stream) {
      expect(chunk.object).toBe("chat.completion.chunk");
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = true;
    }
    expect(text).toBe("Rex would love a walk today.");
    expect(usage).toBe(true);
    expect(JSON.stringify(answerRequest()!.body.messages)).toContain("Has a dog named Rex");
    // Stored as the user reads it, and the cited memory counts as used.
    const answer = await t.db.item.findFirstOrThrow({ where: { userId: u.userId, role: "assistant" } });
    expect(answer.content).toBe("Rex would love a walk today.");
    expect(await t.db.memoryUse.count({ where: { itemId: answer.id, used: true } })).toBe(1);
    const list = await client(key).models.list();
    expect(list.data.map((m) => m.id)).toEqual(["mock-chat"]);
  });

  it.each(["vllm", "ollama-shift"] as const)(
    "the memory block is fitted to what the server reads (%s); the client's own messages go as they are",
    async (overflow) => {
      const u = await newUser();
      await addMemory(u, { text: "Allergic to peanuts", source: "explicit" }, "user", "said so");
      for (let i = 0; i < 80; i++) {
        const text = `Enjoyed the dish number ${i} with rice and a salad on the side`;
        await t.db.memory.create({ data: { userId: u.userId, text, source: "inferred", tokens: countTokens(text) } });
      }
      const { key } = await createApiKey(u, { name: "notes", scopes: ["chat"] });
      mock.contextLength = 1600; // as the mock counts: a quarter of the characters
      mock.overflow = overflow;
      const notes = `My notes: ${"we cooked and tasted and wrote it all down. ".repeat(80)}`;
      const ask = (q: string) =>
        client(key).chat.completions.create({
          model: "mnemo",
          messages: [
            { role: "user", content: notes },
            { role: "assistant", content: "Got it." },
            { role: "user", content: q },
          ],
        });
      const size = (r: RecordedRequest) => Math.ceil(JSON.stringify(r.body.messages).length / 4);
      const r = await ask("Any peanut-free snack ideas for the dish with rice?");
      expect(r.choices[0].message.content).toMatch(/^Mock answer/);
      const first = mock.chatRequests().filter((q) => q.body.model === "mock-chat");
      // Refused, or cut by the server: either way the next request's memory block fits beside the client's notes.
      expect(size(first[0])).toBeGreaterThan(1600);
      if (overflow === "vllm") {
        expect(first).toHaveLength(2);
        expect(size(first[1])).toBeLessThan(1600);
        expect(JSON.stringify(first[1].body.messages)).toContain("Allergic to peanuts");
      }
      mock.reset();
      mock.contextLength = 1600;
      mock.overflow = overflow;
      await ask("Another peanut-free idea for the dish with rice?");
      const next = mock.chatRequests().filter((q) => q.body.model === "mock-chat");
      expect(next).toHaveLength(1);
      expect(size(next[0])).toBeLessThan(1600);
      expect(JSON.stringify(next[0].body.messages)).toContain("Allergic to peanuts");
      expect(JSON.stringify(next[0].body.messages)).toContain(notes.slice(0, 200));
    },
  );

  it("a client whose own messages are longer than the model reads gets the server's refusal", async () => {
    const u = await newUser();
    await addMemory(u, { text: "Allergic to peanuts", source: "explicit" }, "user", "said so");
    const { key } = await createApiKey(u, { name: "long", scopes: ["chat"] });
    mock.contextLength = 1200;
    const long = `Read this: ${"a very long document about peanuts. ".repeat(400)}`;
    const call = client(key).chat.completions.create({ model: "mnemo", messages: [{ role: "user", content: long }] });
    await expect(call).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("longer than the model can read at once (1,200 tokens)"),
    });
  });

  it("a message of megabytes reaches the model whole; the thread keeps its first 1,000,000 characters, marked", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "bulk", scopes: ["chat"] });
    const words = Array.from({ length: 700_000 }, (_, i) => (i * 7919).toString(36)).join(" ");
    mock.script({ content: "Read it all." });
    const r = await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: words }],
    });
    expect(r.choices[0].message.content).toBe("Read it all.");
    expect((answerRequest()!.body.messages as Array<{ content: string }>).at(-1)!.content).toBe(words);
    const stored = await t.db.item.findFirstOrThrow({ where: { userId: u.userId, role: "user" } });
    expect(stored.content.length).toBeLessThan(1_000_100);
    expect(stored.content.startsWith(words.slice(0, 999_000))).toBe(true);
    expect(stored.content).toMatch(/\[cut at 1,000,000 characters when stored\]$/);
  });

  it("an answer of megabytes reaches the client whole; the thread keeps its first 1,000,000 characters, marked", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "echo", scopes: ["chat"] });
    const words = Array.from({ length: 300_000 }, (_, i) => (i * 7919).toString(36)).join(" ");
    mock.script({ content: words });
    const r = await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Say it all back." }],
    });
    expect(r.choices[0].message.content).toBe(words);
    const stored = await t.db.item.findFirstOrThrow({ where: { userId: u.userId, role: "assistant" } });
    expect(stored.content.startsWith(words.slice(0, 999_000))).toBe(true);
    expect(stored.content).toMatch(/\[cut at 1,000,000 characters when stored\]$/);
  });

  it("learning from a document of 600,000 characters reads its start and its end, cut for the memory model", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "doc", scopes: ["chat", "memory:write"] });
    await runDueJobs(t.db); // earlier tests' learning first
    const words = Array.from({ length: 90_000 }, (_, i) => (i * 7919).toString(36)).join(" ");
    const doc = `Remember my sister Ines lives in Braga. ${words} And remember I start on Monday.`;
    expect(doc.length).toBeGreaterThan(600_000);
    mock.script({ content: "Noted." });
    await client(key).chat.completions.create({ model: "mnemo", messages: [{ role: "user", content: doc }] });
    mock.reset();
    mock.script({ system: "You maintain a user's long-term memory", json: { decisions: [{ op: "NONE" }] } });
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const learning = mock.chatRequests().find((r) => JSON.stringify(r.body).includes("Latest exchange"));
    const prompt = (learning!.body.messages as Array<{ content: string }>).at(-1)!.content;
    expect(prompt).toContain("Remember my sister Ines lives in Braga.");
    expect(prompt).toContain("And remember I start on Monday.");
    expect(prompt).toContain("[… cut to fit the model's context …]");
    expect(prompt.length).toBeLessThan(20_000);
  });

  it("client tools pass through to the model and its calls come back to the client", async () => {
    const u = await newUser();
    const { key } = await createApiKey(u, { name: "agent", scopes: ["chat"] });
    mock.script({ toolCalls: [{ name: "get_weather", arguments: { city: "Porto" } }] });
    const tools = [
      {
        type: "function" as const,
        function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: {} } },
      },
    ];
    const r = await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Weather in Porto?" }],
      tools,
    });
    expect(r.choices[0].message.tool_calls?.[0]).toMatchObject({ function: { name: "get_weather" } });
    expect(answerRequest()!.body.tools).toEqual(tools);
  });

  it("a revoked key, a wrong scope and a key in the URL are refused, and nothing is stored", async () => {
    const u = await newUser();
    const revoked = await createApiKey(u, { name: "old", scopes: ["chat"] });
    await revokeApiKey(u, revoked.id);
    const readOnly = await createApiKey(u, { name: "reader", scopes: ["memory:read"] });
    const good = await createApiKey(u, { name: "good", scopes: ["chat"] });
    const ask = (key: string) =>
      client(key).chat.completions.create({ model: "mnemo", messages: [{ role: "user", content: "hello" }] });
    await expect(ask(revoked.key)).rejects.toMatchObject({ status: 401 });
    await expect(ask(readOnly.key)).rejects.toMatchObject({ status: 403 });
    await expect(ask("mnemo_made-up-key")).rejects.toMatchObject({ status: 401 });
    const inUrl = await completions.POST(
      new Request(`http://mnemo.test/v1/chat/completions?api_key=${good.key}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "hello" }] }),
      }),
    );
    expect(inUrl.status).toBe(401);
    expect(((await inUrl.json()) as { error: { message: string } }).error.message).toMatch(/never in a URL/);
    expect(await t.db.thread.count({ where: { userId: u.userId } })).toBe(0);
    expect(mock.chatRequests()).toHaveLength(0);
  });

  it("a key limited to a project-only project recalls only that project's memory, and what it teaches lands there", async () => {
    const u = await newUser();
    await addMemory(u, { text: "Has a cat named Miso", source: "explicit" }, "user", "said so");
    const p = await createProject(u, { name: "Novel", memoryMode: "project_only" });
    await addMemory(
      inMemoryScope(u, exactScope(p.id)),
      { text: "The detective is Alves", source: "explicit" },
      "user",
      "x",
    );
    const { key } = await createApiKey(u, { name: "writer", scopes: ["chat", "memory:write"], projectId: p.id });
    await runDueJobs(t.db); // earlier tests' learning first: the scripted extraction below is this test's
    mock.script({
      system: "You maintain a user's long-term memory",
      json: { decisions: [{ op: "ADD", text: "The novel is set in Lisbon" }] },
    });
    await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "Tell me about my cat and the detective; the novel is set in Lisbon" }],
    });
    const sent = JSON.stringify(answerRequest()!.body.messages);
    expect(sent).toContain("The detective is Alves");
    expect(sent).not.toContain("Has a cat named Miso");
    await runDueJobs(t.db);
    expect(
      await t.db.memory.findFirst({ where: { userId: u.userId, text: "The novel is set in Lisbon" } }),
    ).toMatchObject({
      projectId: p.id,
    });
    expect((await t.db.thread.findFirstOrThrow({ where: { userId: u.userId } })).projectId).toBe(p.id);
  });

  it("keys are audited, exported without their hash, and another user's key reaches only that user's data", async () => {
    const u = await newUser();
    const other = await newUser();
    await addMemory(other, { text: "Other user's secret fact", source: "explicit" }, "user", "x");
    const { key, id } = await createApiKey(u, { name: "phone", scopes: ["chat"] });
    await revokeApiKey(u, id);
    expect(
      (await t.db.auditLog.findMany({ where: { subjectUserId: u.userId }, orderBy: { at: "asc" } })).map(
        (a) => a.action,
      ),
    ).toEqual(["apikey.create", "apikey.revoke"]);
    let file = "";
    for await (const chunk of exportUserData(u)) file += chunk;
    const exported = JSON.parse(file) as { apiKeys: Array<Record<string, unknown>> };
    expect(exported.apiKeys).toMatchObject([{ id, name: "phone", scopes: ["chat"] }]);
    expect(exported.apiKeys[0]).not.toHaveProperty("hash");
    expect(file).not.toContain(key);
    const mine = await createApiKey(u, { name: "laptop", scopes: ["chat"] });
    await client(mine.key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "secret fact?" }],
    });
    expect(JSON.stringify(answerRequest()!.body.messages)).not.toContain("Other user's secret fact");
  });
});

describe.each(engines)("the MCP server on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
    state.db = t.db;
  });
  afterAll(async () => t?.close());

  async function connect(key: string) {
    const c = new Client({ name: "mnemo-test", version: "1.0.0" });
    await c.connect(
      new StreamableHTTPClientTransport(new URL("http://mnemo.test/mcp"), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: async (url, init) => {
          const req = new Request(String(url), init as RequestInit);
          return req.method === "GET" ? mcp.GET() : req.method === "DELETE" ? mcp.DELETE(req) : mcp.POST(req);
        },
      }),
    );
    return c;
  }
  const data = (r: unknown) => JSON.parse((r as { content: Array<{ text: string }> }).content[0].text);

  it("the SDK's own client lists and calls every tool and reads the profile resource", async () => {
    state.db = t.db;
    const u = await userContext(
      t.db,
      (await t.db.user.create({ data: { email: `mcp-${engine}-${n++}@example.com` } })).id,
    );
    const thread = await t.db.thread.create({ data: { userId: u.userId, title: u.cipher.seal("Plants") } });
    await appendItems(t.db, thread.id, [{ role: "user", content: "My fig tree dropped its leaves" }], {
      cipher: u.cipher,
    });
    const { key } = await createApiKey(u, { name: "claude-desktop", scopes: ["memory:read", "memory:write"] });
    const c = await connect(key);
    const names = (await c.listTools()).tools.map((x) => x.name).sort();
    expect(names).toEqual([
      "forget",
      "list_memories",
      "remember",
      "search_conversations",
      "search_memory",
      "update_memory",
    ]);
    const saved = data(await c.callTool({ name: "remember", arguments: { text: "Grows a fig tree on the balcony" } }));
    expect(saved).toMatchObject({ saved: { text: "Grows a fig tree on the balcony" } });
    const id = saved.saved.id as string;
    expect(data(await c.callTool({ name: "search_memory", arguments: { query: "fig tree" } })).memories).toEqual([
      expect.objectContaining({
        id,
        text: "Grows a fig tree on the balcony",
        since: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
      }),
    ]);
    expect(data(await c.callTool({ name: "list_memories", arguments: {} })).memories).toHaveLength(1);
    expect(
      data(
        await c.callTool({ name: "update_memory", arguments: { id, text: "Grows two fig trees", why: "corrected" } }),
      ),
    ).toMatchObject({ proposedForReview: expect.any(String) }); // the user said it: only a proposal changes it
    const found = data(await c.callTool({ name: "search_conversations", arguments: { query: "fig leaves" } }));
    expect(found.messages[0]).toMatchObject({ thread: "Plants", role: "user" });
    const profile = await c.readResource({ uri: "mnemo://memory/profile" });
    expect(JSON.stringify(profile.contents)).toContain("Grows a fig tree on the balcony");
    await c.close();
  });

  it("a forget under review becomes a proposal; a read-only key cannot write; a bad key is refused", async () => {
    state.db = t.db;
    const u = await userContext(
      t.db,
      (await t.db.user.create({ data: { email: `mcp-${engine}-${n++}@example.com` } })).id,
    );
    await t.db.user.update({ where: { id: u.userId }, data: { memoryReview: true } });
    const m = await addMemory(u, { text: "Drinks oat milk", source: "inferred" }, "model", "learned");
    const writer = await createApiKey(u, { name: "cursor", scopes: ["memory:read", "memory:write"] });
    const c = await connect(writer.key);
    expect(data(await c.callTool({ name: "forget", arguments: { ids: [m.id] } }))).toMatchObject({
      proposedForReview: 1,
    });
    expect(await t.db.memory.findUniqueOrThrow({ where: { id: m.id } })).toMatchObject({ status: "active" });
    expect(await t.db.memory.count({ where: { userId: u.userId, proposalForId: m.id, proposalOp: "archive" } })).toBe(
      1,
    );
    await c.close();
    const reader = await createApiKey(u, { name: "reader", scopes: ["memory:read"] });
    const r = await connect(reader.key);
    // tools/list shows a key only what its scopes allow.
    expect((await r.listTools()).tools.map((x) => x.name).sort()).toEqual([
      "list_memories",
      "search_conversations",
      "search_memory",
    ]);
    const refused = await r.callTool({ name: "remember", arguments: { text: "Should not be saved" } });
    expect(refused.isError).toBe(true);
    expect(await t.db.memory.count({ where: { userId: u.userId, text: "Should not be saved" } })).toBe(0);
    await r.close();
    await expect(connect("mnemo_not-a-real-key")).rejects.toThrow(/This API key is not valid/);
    // What an MCP client reads before any OAuth: a bearer challenge with the reason, and JSON everywhere it looks.
    const bad = await mcp.POST(
      new Request("http://mnemo.test/mcp", {
        method: "POST",
        headers: { authorization: "Bearer mnemo_revoked-or-made-up", "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
      }),
    );
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toMatch(/^Bearer .*error="invalid_token".*not valid/);
    expect(await bad.json()).toEqual({ error: "invalid_token", error_description: "This API key is not valid." });
    const events = mcp.GET();
    expect(events.status).toBe(405);
    const metadata = wellKnown.GET();
    expect(metadata.status).toBe(404);
    expect((await metadata.json()).error_description).toMatch(/API key/);
    // A key without memory:read reading the profile: the scope is named, as for the tools.
    const chatOnly = await createApiKey(u, { name: "chat-only", scopes: ["chat"] });
    const co = await connect(chatOnly.key);
    await expect(co.readResource({ uri: "mnemo://memory/profile" })).rejects.toThrow(/lacks the “memory:read” scope/);
    await co.close();
    // Another user's key names this user's memory: not found, nothing changes.
    const other = await userContext(
      t.db,
      (await t.db.user.create({ data: { email: `mcp-${engine}-${n++}@x.com` } })).id,
    );
    const theirs = await connect((await createApiKey(other, { name: "x", scopes: ["memory:write"] })).key);
    const tried = await theirs.callTool({ name: "forget", arguments: { ids: [m.id] } });
    expect(tried.isError).toBe(true);
    expect(JSON.stringify(tried.content)).toMatch(/not found/i);
    expect(await t.db.memory.count({ where: { proposalForId: m.id } })).toBe(1); // still only this user's proposal
    await theirs.close();
  });
});

describe.each(engines)("what left the box on %s", (engine) => {
  let t: TestDb;
  let mock: MockLlm;
  let n = 0;
  const realFetch = globalThis.fetch;
  beforeAll(async () => {
    t = await createTestDb(engine);
    mock = await startMockLlm();
    // A model server that is not on this machine, as far as Mnemo can tell: its name routes to the test server.
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = String(input instanceof Request ? input.url : input).replace("remote-model.test", "127.0.0.1");
      return realFetch(input instanceof Request ? new Request(url, input) : url, init);
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await mock?.close();
    await t?.close();
  });

  it("a private memory never reaches a non-local endpoint, and the record of what was sent shows only the rest", async () => {
    state.db = t.db;
    const id = (await t.db.user.create({ data: { email: `trail-${engine}-${n++}@example.com` } })).id;
    const remote = mock.url.replace("127.0.0.1", "remote-model.test");
    await saveConnection(t.db, { baseURL: remote, chatModel: "mock-chat", memoryModel: "mock-memory" }, id);
    clearConnectionCache(t.db);
    const u = await userContext(t.db, id);
    const secret = await addMemory(u, { text: "Takes sertraline every morning", source: "explicit" }, "user", "x");
    await t.db.memory.update({ where: { id: secret.id }, data: { private: true } });
    const open = await addMemory(u, { text: "Takes the train every morning", source: "explicit" }, "user", "x");
    const { key } = await createApiKey(u, { name: "laptop", scopes: ["chat"] });
    await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "What do I take every morning?" }],
    });
    const sent = JSON.stringify(mock.chatRequests().at(-1)!.body.messages);
    expect(sent).toContain("Takes the train every morning");
    expect(sent).not.toContain("sertraline");
    const trail = await whereMemoriesWent(u, 7);
    expect(trail.memories.map((m) => m.memoryId)).toEqual([open.id]);
    expect(trail.destinations).toEqual([
      expect.objectContaining({
        model: "mock-chat",
        local: false,
        times: 1,
        byClient: [{ client: "key “laptop”", times: 1 }],
      }),
    ]);
    // On a local server the private memory goes in, and the record says where.
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, id);
    clearConnectionCache(t.db);
    await client(key).chat.completions.create({
      model: "mnemo",
      messages: [{ role: "user", content: "What medicine do I take every morning?" }],
    });
    expect(JSON.stringify(mock.chatRequests().at(-1)!.body.messages)).toContain("sertraline");
    const after = await whereMemoriesWent(u, 7);
    expect(after.memories.find((m) => m.memoryId === secret.id)?.destinations).toEqual([
      expect.objectContaining({ local: true, times: 1 }),
    ]);
  });
});
