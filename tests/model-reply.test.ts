// Mnemo works with any OpenAI-compatible server, and servers differ in what they give back: LM Studio refuses JSON
// mode with a 400, a reasoning model served by vLLM or an older Ollama leaves its <think> block in the reply, small
// local models wrap JSON in fences and sentences or leave a trailing comma. Learning, titles and summaries must
// still work, and a reply cut off by the token limit must never write half a memory.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import OpenAI from "openai";
import { z } from "zod";
import { jsonFromReply, LeadingReasoningFilter, withoutReasoning } from "@/lib/llm/model-reply";
import { askMemoryModelJson } from "@/lib/llm/memory-json";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { runDueJobs } from "@/lib/jobs/worker";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { lastUserText, startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { connectToMock } from "@/testing/mock-connection";
import { collect } from "./helpers/turns";
import { addMemory } from "@/lib/memory/store";
import { userContext } from "@/lib/user-context";
import { REFUSAL_TTL_MS, withoutRefused } from "@/lib/llm/server-quirks";

describe("the answer in a model's reply", () => {
  it("finds the JSON object behind thinking, fences and sentences", () => {
    const wrapped = [
      "<think>The user said they moved. {not json} I should add a memory.</think>",
      "Sure! Here is the result:",
      "```json",
      '{"decisions": [{"op": "ADD", "text": "Uses {braces} and \\"quotes\\"", "kind": "fact"}]}',
      "```",
      "Let me know if you need more.",
    ].join("\n");
    expect(jsonFromReply(wrapped)).toEqual({
      decisions: [{ op: "ADD", text: 'Uses {braces} and "quotes"', kind: "fact" }],
    });
  });

  it("repairs what is nearly JSON: trailing commas, single quotes, comments", () => {
    expect(jsonFromReply("{'label': 'CORRECT',}")).toEqual({ label: "CORRECT" });
    expect(jsonFromReply('{"a": [1, 2,], // two\n"b": true}')).toEqual({ a: [1, 2], b: true });
  });

  it("reads a bare list of objects, but not a footnote in prose", () => {
    expect(jsonFromReply('Here you go: [{"op": "NONE"}]')).toEqual([{ op: "NONE" }]);
    expect(jsonFromReply('As noted [1], the answer is {"label": "WRONG"}')).toEqual({ label: "WRONG" });
  });

  it("gives nothing for a reply cut off before its object closes, or one with no object", () => {
    expect(jsonFromReply('{"decisions": [{"op": "ADD", "text": "Has a cat na')).toBeUndefined();
    expect(jsonFromReply("<think>Let me think about what the user")).toBeUndefined();
    expect(jsonFromReply("I cannot help with that.")).toBeUndefined();
  });

  it("takes the thinking out of a text reply, closed or cut off", () => {
    expect(withoutReasoning("<think>\nshort title needed\n</think>\n\nMoving to Porto")).toBe("Moving to Porto");
    expect(withoutReasoning("<THINK>the user wants a title, maybe")).toBe("");
    expect(withoutReasoning("Plain answer with <b>tags</b>")).toBe("Plain answer with <b>tags</b>");
    expect(withoutReasoning("Use a <think> tag, then </think>.")).toBe("Use a <think> tag, then </think>.");
    expect(withoutReasoning("Models write <think> first")).toBe("Models write <think> first");
  });
});

describe("a streamed answer's leading thinking", () => {
  const streamed = (deltas: string[]) => {
    const f = new LeadingReasoningFilter();
    return deltas.map((d) => f.push(d)).join("") + f.end();
  };
  const chars = (s: string) => [...s];

  it("is held back however the deltas split it, and the answer after it passes", () => {
    const reply = "<think>\nThe user greets me. </thi nk> is not a tag.\n</think>\n\nHello <b>there</b>!";
    for (const deltas of [
      [reply],
      chars(reply),
      ["<thi", "nk>\nThe user", " greets me. </thi nk> is not a tag.\n</th", "ink>", "\n", "\nHello <b>there</b>!"],
    ])
      expect(streamed(deltas)).toBe("Hello <b>there</b>!");
  });

  it("leaves an answer that opens with anything else as it is", () => {
    expect(streamed(chars("<b>Bold</b> start"))).toBe("<b>Bold</b> start");
    expect(streamed(["  Indented", " answer"])).toBe("  Indented answer");
    expect(streamed(["<"])).toBe("<");
    expect(streamed(["Say <think> here"])).toBe("Say <think> here");
  });

  it("gives nothing for thinking the token limit cut off", () => {
    expect(streamed(["<think>", "still thinking"])).toBe("");
  });
});

describe("what a server refused", () => {
  // A server that refused JSON mode until it was upgraded: asked without it for an hour, then with it again.
  it("is asked without for an hour, then asked again (an upgraded server gets the feature back)", async () => {
    const conn = { baseURL: "http://upgraded.test/v1" };
    let refuses = true;
    const asked: boolean[] = [];
    const call = () =>
      withoutRefused(conn, "m", ["jsonMode"], async (use) => {
        asked.push(use.has("jsonMode"));
        if (use.has("jsonMode") && refuses)
          throw OpenAI.APIError.generate(
            400,
            { error: { message: "response_format must be 'json_schema' or 'text'" } },
            undefined,
            new Headers(),
          );
        return "ok";
      });
    const now = vi.spyOn(Date, "now");
    try {
      now.mockReturnValue(1_000_000);
      expect(await call()).toBe("ok");
      now.mockReturnValue(1_000_000 + REFUSAL_TTL_MS - 1);
      expect(await call()).toBe("ok");
      refuses = false;
      now.mockReturnValue(1_000_000 + REFUSAL_TTL_MS + 1);
      expect(await call()).toBe("ok");
    } finally {
      now.mockRestore();
    }
    // Refused and asked again; within the hour at once without; after it, with JSON mode again (now accepted).
    expect(asked).toEqual([true, false, false, true]);
  });
});

const threadOf = (events: TurnEvent[]) => (events[0] as { threadId: string }).threadId;

describe.each(engines)("servers that answer differently, on %s", (engine) => {
  let t: TestDb;
  // A server of its own: what the app learns about a server (it refuses JSON mode) is kept per server.
  let mock: MockLlm;
  let n = 0;
  const newUser = async () => (await t.db.user.create({ data: { email: `reply-${n++}-${engine}@example.com` } })).id;
  beforeAll(async () => {
    mock = await startMockLlm();
    t = await createTestDb(engine);
    await connectToMock(t.db, mock.url, `reply-${engine}`);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });
  beforeEach(() => mock.reset());

  it("a server that refuses JSON mode (LM Studio) still learns: asked again without it, and after that at once", async () => {
    mock.refuseJsonMode = true;
    const user = await newUser();
    mock.script(
      { match: "latest exchange", json: { decisions: [{ op: "ADD", text: "Has a cat named Miso", kind: "fact" }] } },
      { match: "latest exchange", json: { decisions: [{ op: "ADD", text: "Lives in Porto", kind: "fact" }] } },
    );
    await collect(runTurn(t.db, user, { kind: "send", content: "I adopted a cat named Miso" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    await collect(runTurn(t.db, user, { kind: "send", content: "We live in Porto now" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const texts = (await t.db.memory.findMany({ where: { userId: user, status: "active" } })).map((m) => m.text);
    expect(texts.sort()).toEqual(["Has a cat named Miso", "Lives in Porto"]);
    const extractions = mock.chatRequests().filter((r) => JSON.stringify(r.body).includes("Latest exchange"));
    // The first was refused and asked again; the second went without JSON mode at once.
    expect(extractions.map((r) => r.body.response_format?.type ?? null)).toEqual(["json_object", null, null]);
  });

  it("a reasoning model's extraction (thinking, a fence, a sentence) is learned; its title has no thinking", async () => {
    const user = await newUser();
    const decisions = { decisions: [{ op: "ADD", text: "Is training for a marathon", kind: "fact" }] };
    mock.script(
      {
        match: "latest exchange",
        content: `<think>The user is training. I'll add it.</think>\n\`\`\`json\n${JSON.stringify(decisions)}\n\`\`\`\nDone.`,
      },
      { system: "title", content: "<think>\nA short title about running.\n</think>\n\nMarathon training plan" },
    );
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "I am training for a marathon" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const memories = await t.db.memory.findMany({ where: { userId: user } });
    expect(memories.map((m) => m.text)).toEqual(["Is training for a marathon"]);
    const thread = await t.db.thread.findUniqueOrThrow({ where: { id: threadOf(events) } });
    expect(thread.title).toBe("Marathon training plan");
  });

  it("a title reply of a long run of spaces is read in time: the title is its first words", async () => {
    const user = await newUser();
    // The trimming of quotes and spaces was tried at each of them (minutes for 100,000 in the job runner).
    mock.script({ system: "title", content: `"Trip${" ".repeat(100_000)}plan"` });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Let us plan the trip" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const thread = await t.db.thread.findUniqueOrThrow({ where: { id: threadOf(events) } });
    expect(thread.title).toBe("Trip");
  });

  it("a reasoning model's chat answer shows, stores and sends back only the answer", async () => {
    const user = await newUser();
    mock.script({
      match: "hello",
      content: "<think>\nThe user says hello. I should greet them back.\n</think>\n\nHello! How can I help?",
    });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "hello" }));
    const shown = events.flatMap((e) => (e.type === "delta" ? [e.text] : [])).join("");
    expect(shown).toBe("Hello! How can I help?");
    const answer = await t.db.item.findFirstOrThrow({ where: { threadId: threadOf(events), role: "assistant" } });
    expect(answer.content).toBe("Hello! How can I help?");
    await collect(runTurn(t.db, user, { kind: "send", content: "and again", threadId: threadOf(events) }));
    const next = mock.chatRequests().filter((r) => lastUserText(r.body) === "and again");
    expect(next).toHaveLength(1);
    expect(JSON.stringify(next[0].body.messages)).toContain("Hello! How can I help?");
    expect(JSON.stringify(next[0].body.messages)).not.toContain("greet them back");
  });

  it("a chat answer that ended while still thinking fails with a sentence and a retry, not an empty bubble", async () => {
    const user = await newUser();
    mock.script({ match: "riddle", content: "<think>\nLet me consider every possibility", finishReason: "length" });
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Solve this riddle" }));
    expect(events.flatMap((e) => (e.type === "delta" ? [e.text] : []))).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "error", message: expect.stringContaining("still thinking") });
    const answer = await t.db.item.findFirstOrThrow({ where: { threadId: threadOf(events), role: "assistant" } });
    expect(answer).toMatchObject({ status: "failed", content: "" });
  });

  it("a model served without tool calling (Ollama) answers without the memory tools, and still learns", async () => {
    mock.refuseTools = true;
    const user = await newUser();
    // Earlier tests' learning may still be due: this script answers this exchange only.
    mock.script({
      match: "Latest exchange:\nUser: I play the cello",
      json: { decisions: [{ op: "ADD", text: "Plays the cello", kind: "fact" }] },
    });
    const first = await collect(runTurn(t.db, user, { kind: "send", content: "I play the cello" }));
    expect(first.at(-1)).toMatchObject({
      type: "done",
      item: { status: "complete", content: "Mock answer to: I play the cello" },
    });
    await collect(runTurn(t.db, user, { kind: "send", content: "Any tips?", threadId: threadOf(first) }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const turns = mock.chatRequests().filter((r) => r.body.model === "mock-chat");
    // Refused once with the tools, asked again without them; the next turn without them at once.
    expect(turns.map((r) => Array.isArray(r.body.tools))).toEqual([true, false, false]);
    expect((await t.db.memory.findMany({ where: { userId: user } })).map((m) => m.text)).toEqual(["Plays the cello"]);
  });

  it("a strict chat template (Mistral, Gemma on vLLM): one system message, turns that alternate", async () => {
    const user = await newUser();
    await addMemory(await userContext(t.db, user), { text: "Plays the viola", source: "explicit" }, "user", "typed");
    const first = await collect(runTurn(t.db, user, { kind: "send", content: "What do I play? viola" }));
    // The next answer fails (the server is down a moment); the user asks again without retrying.
    mock.script({ match: "second try", status: 500 });
    const thread = threadOf(first);
    await collect(runTurn(t.db, user, { kind: "send", content: "A second try", threadId: thread }));
    mock.strictRoles = true;
    const third = await collect(runTurn(t.db, user, { kind: "send", content: "And the viola?", threadId: thread }));
    expect(third.at(-1)).toMatchObject({ type: "done", item: { status: "complete" } });
    const sent = mock.chatRequests().at(-1)!.body.messages as Array<{ role: string; content: string }>;
    expect(sent.filter((m) => m.role === "system")).toHaveLength(1);
    expect(sent[0].content).toContain("<user_memory>");
    expect(sent[0].content).toContain("Plays the viola");
    // The question after the failed answer and the new one reach the model as one turn, both kept.
    expect(sent.at(-1)).toEqual({ role: "user", content: "A second try\n\nAnd the viola?" });
  });

  it("a small model's sloppy extraction keeps what it got right", async () => {
    const user = await newUser();
    // Lower-case ops, a kind not in the list, a confidence as text, one decision without its text, no wrapper.
    mock.script({
      match: "Latest exchange:\nUser: I garden and I bake",
      content: JSON.stringify([
        { op: "add", text: "Gardens on weekends", kind: "hobby", confidence: "0.9" },
        { op: "Add", kind: "fact" },
        { op: "ADD", text: "Bakes sourdough bread", kind: "fact" },
      ]),
    });
    await collect(runTurn(t.db, user, { kind: "send", content: "I garden and I bake" }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const learned = await t.db.memory.findMany({ where: { userId: user }, orderBy: { text: "asc" } });
    expect(learned.map((m) => [m.text, m.kind, m.confidence])).toEqual([
      ["Bakes sourdough bread", "fact", 0.7],
      ["Gardens on weekends", "other", 0.9],
    ]);
  });

  it("a chat longer than the model's context window says so in words a user can act on", async () => {
    const user = await newUser();
    for (const [n, message] of [
      [4096, "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens."], // vLLM
      [
        4096,
        "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens",
      ], // LM Studio
      [0, "the request exceeds the available context size, try increasing it"], // llama.cpp
    ] as const) {
      mock.script({ match: "long chat", status: 400, errorMessage: message });
      const events = await collect(runTurn(t.db, user, { kind: "send", content: "A long chat" }));
      const error = events.at(-1) as { type: string; message: string };
      expect(error.type).toBe("error");
      expect(error.message).toMatch(/^This chat is now longer than the model can read at once/);
      expect(error.message.includes("4,096 tokens")).toBe(n === 4096);
    }
  });

  it("a server that refuses stream_options (older Azure API versions) still answers, without usage", async () => {
    mock.refuseStreamOptions = true;
    const user = await newUser();
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Hi from Azure" }));
    expect(events.at(-1)).toMatchObject({
      type: "done",
      item: { status: "complete", content: "Mock answer to: Hi from Azure" },
    });
    const turns = mock.chatRequests().filter((r) => r.body.model === "mock-chat");
    expect(turns.map((r) => "stream_options" in r.body)).toEqual([true, false]);
  });

  it("a reply cut off by the token limit changes nothing", async () => {
    const user = await newUser();
    const schema = z.object({ decisions: z.array(z.object({ op: z.string(), text: z.string() })) });
    // Complete JSON, but the server says it stopped at the limit: what it meant to say is unknown.
    mock.script({ match: "cut", json: { decisions: [{ op: "ADD", text: "Has a cat" }] }, finishReason: "length" });
    const conn = { baseURL: mock.url, apiKey: "k", chatModel: "mock-chat", memoryModel: "mock-memory" };
    expect(await askMemoryModelJson(conn, "Extract.", "cut", schema, { db: t.db, userId: user })).toBeNull();
  });
});
