// The mock server must behave like an OpenAI-compatible API for the real SDK.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";

let mock: MockLlm;
let client: OpenAI;
beforeAll(async () => {
  mock = await startMockLlm();
  client = new OpenAI({ apiKey: "k", baseURL: mock.url, maxRetries: 0 });
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const ask = (text: string) => [{ role: "user" as const, content: text }];

describe("mock OpenAI-compatible server", () => {
  it("answers without streaming, with usage, and records the request", async () => {
    mock.script({ match: "capital", content: "Paris." });
    const r = await client.chat.completions.create({
      model: "mock-chat",
      messages: ask("What is the capital of France?"),
    });
    expect(r.choices[0].message.content).toBe("Paris.");
    expect(r.usage?.total_tokens).toBeGreaterThan(0);
    expect(mock.chatRequests()[0].body.messages[0].content).toContain("capital");
    expect(mock.chatRequests()[0].headers.authorization).toBe("Bearer k");
  });

  it("streams chunks and a final usage chunk", async () => {
    mock.script({ content: "one two three" });
    const stream = await client.chat.completions.create({
      model: "m",
      messages: ask("hi"),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage;
    let chunks = 0;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? "";
      if (c.usage) usage = c.usage;
      chunks++;
    }
    expect(text).toBe("one two three");
    expect(chunks).toBeGreaterThan(3);
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
  });

  it("returns tool calls, streamed and not", async () => {
    mock.script({ toolCalls: [{ name: "remember", arguments: { text: "likes tea" } }], times: 2 });
    const r = await client.chat.completions.create({ model: "m", messages: ask("remember that I like tea") });
    expect(r.choices[0].finish_reason).toBe("tool_calls");
    const call = r.choices[0].message.tool_calls![0];
    expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ text: "likes tea" });
    const runner = client.chat.completions.stream({ model: "m", messages: ask("remember that I like tea") });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0].message.tool_calls![0];
    expect(streamed.type === "function" && streamed.function.name).toBe("remember");
  });

  it("answers structured output as JSON text", async () => {
    mock.script({ json: { decisions: [{ op: "NONE" }] } });
    const r = await client.chat.completions.create({ model: "m", messages: ask("extract") });
    expect(JSON.parse(r.choices[0].message.content!)).toEqual({ decisions: [{ op: "NONE" }] });
  });

  it("tells requests apart by their system message, whatever order they arrive in", async () => {
    mock.script({ system: "title", content: "A title" }, { content: "other" });
    const plain = await client.chat.completions.create({ model: "m", messages: ask("hello") });
    const title = await client.chat.completions.create({
      model: "m",
      messages: [{ role: "system", content: "Give this a title" }, ...ask("hello")],
    });
    expect([plain.choices[0].message.content, title.choices[0].message.content]).toEqual(["other", "A title"]);
  });

  it("injects HTTP faults", async () => {
    mock.script({ status: 429 }, { status: 500 });
    await expect(client.chat.completions.create({ model: "m", messages: ask("a") })).rejects.toMatchObject({
      status: 429,
    });
    await expect(client.chat.completions.create({ model: "m", messages: ask("a") })).rejects.toMatchObject({
      status: 500,
    });
    const r = await client.chat.completions.create({ model: "m", messages: ask("after the faults") });
    expect(r.choices[0].message.content).toBe("Mock answer to: after the faults");
  });

  it("drops a stream mid-answer and sends malformed chunks on demand", async () => {
    mock.script({ content: "a b c d e f", dropAfterChunks: 2 });
    const drop = async () => {
      const s = await client.chat.completions.create({ model: "m", messages: ask("x"), stream: true });
      for await (const _ of s) void _;
    };
    await expect(drop()).rejects.toThrow();
    mock.script({ content: "a b c", malformedChunk: true });
    await expect(drop()).rejects.toThrow();
  });

  it("delays the first byte on demand", async () => {
    mock.script({ content: "slow", delayMs: 300 });
    const t0 = Date.now();
    await client.chat.completions.create({ model: "m", messages: ask("x") });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it("lists models and exposes its control API over HTTP", async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m.id);
    expect(models).toContain("mock-chat");
    const base = mock.url.replace(/\/v1$/, "");
    await fetch(`${base}/__mock/replies`, {
      method: "POST",
      body: JSON.stringify({ replies: [{ content: "scripted over http" }] }),
    });
    const r = await client.chat.completions.create({ model: "m", messages: ask("x") });
    expect(r.choices[0].message.content).toBe("scripted over http");
    const recorded = await (await fetch(`${base}/__mock/requests`)).json();
    expect(recorded.requests.filter((q: { path: string }) => q.path === "/v1/chat/completions")).toHaveLength(1);
  });
});
