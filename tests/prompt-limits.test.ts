// A chat longer than the model's context: servers either refuse the prompt (vLLM, LM Studio, llama.cpp, Ollama
// without context shift) or, as Ollama does by default, silently drop its start, where Mnemo's instructions and the
// user's memories are. Either way the user gets an answer that had the memories and the newest messages, is told
// when the server cut a prompt, and later turns are sent within what the server reads.
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { runTurn } from "@/lib/chat/turn";
import { createThread } from "@/lib/chat/threads";
import { appendItems, type NewItem } from "@/lib/memory/session";
import { addMemory } from "@/lib/memory/store";
import { userContext } from "@/lib/user-context";
import { REFUSAL_TTL_MS } from "@/lib/llm/server-quirks";
import {
  cutToTokens,
  fittedBudgets,
  forgetPromptLimits,
  knownPromptLimit,
  noteReportedPrompt,
  promptWasCut,
} from "@/lib/llm/prompt-limits";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm, type RecordedRequest } from "@/testing/mock-llm";
import { connectToMock } from "@/testing/mock-connection";
import { collect } from "./helpers/turns";
import { runDueJobs } from "@/lib/jobs/worker";
import { countTokens } from "@/lib/memory/tokens";

type Body = { messages: Array<{ role: string; content: string }>; tools?: unknown[] };
/** How long a request is as the mock server counts it (a quarter of the characters of its messages and tools). */
const serverTokens = (r: RecordedRequest) => {
  const b = r.body as Body;
  const chars = b.messages.reduce((n, m) => n + String(m.content ?? "").length, 0);
  return Math.ceil(chars / 4) + (b.tools?.length ? Math.ceil(JSON.stringify(b.tools).length / 4) : 0);
};
const systemOf = (r: RecordedRequest) => (r.body as Body).messages.find((m) => m.role === "system")?.content ?? "";
const lastOf = (r: RecordedRequest) => (r.body as Body).messages.at(-1)?.content ?? "";

describe("what a server reads of a prompt", () => {
  it("a prompt reported far under what was sent was cut; tokenizers that differ a little are not", () => {
    expect(promptWasCut(7000, 2050)).toBe(true);
    expect(promptWasCut(7000, 5600)).toBe(false); // a tokenizer 20% leaner than Mnemo's
    expect(promptWasCut(800, 100)).toBe(false); // too short to have been cut (a server counting differently)
    expect(promptWasCut(7000, null)).toBe(false); // no usage reported
  });

  it("a known limit splits into memory (at most a quarter) and history, never above the configured budgets", () => {
    expect(fittedBudgets(null, { memory: 800, history: 6000 }, 400)).toEqual({ memory: 800, history: 6000 });
    expect(fittedBudgets(2000, { memory: 800, history: 6000 }, 400)).toEqual({ memory: 500, history: 1100 });
    expect(fittedBudgets(100_000, { memory: 800, history: 6000 }, 400)).toEqual({ memory: 800, history: 6000 });
  });

  it("a learned limit is trusted for an hour, then the whole prompt is tried again", () => {
    forgetPromptLimits();
    const conn = { baseURL: "http://ollama.test/v1" };
    expect(noteReportedPrompt(conn, "llama3.1", 7000, 2050)).toBe(true);
    expect(knownPromptLimit(conn, "llama3.1")).toBe(1845);
    expect(knownPromptLimit(conn, "another-model")).toBeNull();
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + REFUSAL_TTL_MS + 1);
    expect(knownPromptLimit(conn, "llama3.1")).toBeNull();
    vi.restoreAllMocks();
  });
});

describe("a text cut to a number of tokens", () => {
  it("a text of megabytes is cut within the tokens, nearly all of them used, its start and end kept", () => {
    const words = Array.from({ length: 400_000 }, (_, i) => (i * 7919 + 1_000_003).toString(36)).join(" ");
    const text = `START here. ${words} and the END.`;
    for (const tokens of [50, 3000, 20_000]) {
      const cut = cutToTokens(text, tokens);
      const has = countTokens(cut);
      expect(has).toBeLessThanOrEqual(tokens);
      expect(has).toBeGreaterThan(tokens * 0.75);
      expect(cut.startsWith("START here.")).toBe(true);
      expect(cut.endsWith("and the END.")).toBe(true);
      expect(cut).toContain("[… cut to fit the model's context …]");
    }
    const short = "Short enough to keep.";
    expect(cutToTokens(short, 100)).toBe(short);
  });
});

describe.each(engines)("a chat longer than the model's context, on %s", (engine) => {
  let t: TestDb;
  let mock: MockLlm;
  let n = 0;
  beforeAll(async () => {
    mock = await startMockLlm();
    t = await createTestDb(engine);
    await connectToMock(t.db, mock.url, `limits-${engine}`);
  });
  afterAll(async () => {
    await t?.close();
    await mock?.close();
  });
  beforeEach(async () => {
    // Work queued by the test before (its summaries, its learning) is done first, so each test sees only its own.
    mock.reset();
    await runDueJobs(t.db);
    mock.reset();
    forgetPromptLimits();
  });

  /** A user with a memory and a thread of twelve long exchanges (about 5,000 tokens). */
  async function longChat() {
    const user = (await t.db.user.create({ data: { email: `limits-${n++}-${engine}@example.com` } })).id;
    const u = await userContext(t.db, user);
    await addMemory(u, { text: "Has a golden retriever named Max", source: "explicit" }, "user", "said so");
    const thread = await createThread(u);
    const items: NewItem[] = [];
    for (let i = 0; i < 12; i++) {
      items.push({
        role: "user",
        content: `Part ${i} of my travel notes: ${"we walked along the river and ".repeat(25)}`,
      });
      items.push({ role: "assistant", content: `Noted part ${i}: ${"a lovely walk by the water, ".repeat(25)}` });
    }
    await appendItems(t.db, thread.id, items, { cipher: u.cipher });
    return { user, threadId: thread.id };
  }
  const ask = (user: string, threadId: string, content: string) =>
    collect(runTurn(t.db, user, { kind: "send", threadId, content }));

  it.each(["vllm", "ollama"] as const)(
    "a server that refuses it (%s) answers: asked again at once with the memories and the newest messages",
    async (overflow) => {
      mock.contextLength = 2500;
      mock.overflow = overflow;
      const { user, threadId } = await longChat();
      const events = await ask(user, threadId, "What should I name my next dog?");
      expect(events.at(-1)).toMatchObject({ type: "done", item: { status: "complete", error: null } });
      const asked = mock.chatRequests().filter((r) => lastOf(r) === "What should I name my next dog?");
      expect(asked.length).toBeGreaterThan(1);
      expect(serverTokens(asked[0])).toBeGreaterThan(2500); // refused
      const fitted = asked.at(-1)!;
      expect(serverTokens(fitted)).toBeLessThanOrEqual(2500);
      expect(systemOf(fitted)).toContain("Has a golden retriever named Max");
      expect(JSON.stringify(fitted.body)).toContain("Part 11 of my travel notes");
      // The next turn is fitted at once: one request.
      const before = mock.chatRequests().length;
      await ask(user, threadId, "And a name for a cat?");
      const next = mock
        .chatRequests()
        .slice(before)
        .filter((r) => lastOf(r) === "And a name for a cat?");
      expect(next).toHaveLength(1);
      expect(serverTokens(next[0])).toBeLessThanOrEqual(2500);
    },
  );

  it("a server that cuts it silently (Ollama's context shift): the answer says so, and later turns fit", async () => {
    mock.contextLength = 2500;
    mock.overflow = "ollama-shift";
    const { user, threadId } = await longChat();
    const events = await ask(user, threadId, "What should I name my next dog?");
    const done = events.at(-1) as { type: string; item: { status: string; error: string | null } };
    expect(done).toMatchObject({ type: "done", item: { status: "complete" } });
    expect(done.item.error).toMatch(/^The model server read only [\d,]+ of about [\d,]+ tokens Mnemo sent/);
    // Stored with the answer: a reload shows it too.
    const stored = await t.db.item.findFirst({ where: { threadId, role: "assistant" }, orderBy: { position: "desc" } });
    expect(stored?.error).toBe(done.item.error);

    const before = mock.chatRequests().length;
    const next = (await ask(user, threadId, "And a name for a cat?")).at(-1);
    expect(next).toMatchObject({ type: "done", item: { status: "complete", error: null } });
    const sent = mock
      .chatRequests()
      .slice(before)
      .filter((r) => lastOf(r) === "And a name for a cat?");
    expect(sent).toHaveLength(1);
    expect(serverTokens(sent[0])).toBeLessThanOrEqual(2500);
    expect(systemOf(sent[0])).toContain("Has a golden retriever named Max");
  });

  it("a server that counts only what its cache did not hold: one needless warning, then its counts are not trusted", async () => {
    mock.uncachedUsage = true; // reads every prompt whole, reports only what differs from the one before
    const { user, threadId } = await longChat();
    const turns: Array<{ error: string | null; sent: number }> = [];
    for (const q of ["Name for a dog?", "Name for a cat?", "Name for a horse?", "Name for a fish?"]) {
      const before = mock.chatRequests().length;
      const done = (await ask(user, threadId, q)).at(-1) as { item: { status: string; error: string | null } };
      expect(done.item.status).toBe("complete");
      const req = mock
        .chatRequests()
        .slice(before)
        .find((r) => lastOf(r) === q)!;
      turns.push({ error: done.item.error, sent: serverTokens(req) });
    }
    // The first is cold (counted whole); the second shares most of its prompt with it, so it looks cut.
    expect(turns[0].error).toBeNull();
    expect(turns[1].error).toMatch(/^The model server read only/);
    // The third is sent within what the second "read"; reported short again, the count is seen for what it is.
    expect(turns[2].sent).toBeLessThan(turns[1].sent / 2);
    expect(turns[2].error).toBeNull();
    // From then on the whole prompt goes again, and no answer is wrongly warned about.
    expect(turns[3].error).toBeNull();
    expect(turns[3].sent).toBeGreaterThan(turns[1].sent * 0.9);
  });

  it("the summary of a long backlog is folded in pieces the server reads, and covers the window the turn used", async () => {
    mock.contextLength = 2500;
    mock.script({ system: "running summary", content: "Summary so far: river walks.", times: 10 });
    const { user, threadId } = await longChat();
    await ask(user, threadId, "What should I name my next dog?");
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const summaries = mock.chatRequests().filter((r) => systemOf(r).startsWith("You maintain a running summary"));
    expect(summaries.length).toBeGreaterThan(1);
    // At most the first is refused (the memory model's limit is learned from it), none after.
    expect(summaries.slice(1).every((r) => serverTokens(r) <= 2500)).toBe(true);
    // Each piece after the first is merged into the summary so far.
    expect(lastOf(summaries.at(-1)!)).toContain("Existing summary:\nSummary so far: river walks.");
    const summary = await t.db.summary.findFirst({ where: { threadId }, orderBy: { version: "desc" } });
    expect(summary).not.toBeNull();
    // It reaches up to where the fitted window starts (with the configured 6,000 tokens the whole thread fits, and
    // nothing would be summarised): the turns the answer did not see are in the summary.
    const answer = mock
      .chatRequests()
      .filter((r) => lastOf(r) === "What should I name my next dog?")
      .at(-1)!;
    const firstShown = /Part (\d+) of my travel notes/.exec(JSON.stringify(answer.body.messages.slice(1)))![1];
    const through = await t.db.item.findUniqueOrThrow({ where: { id: summary!.throughItemId } });
    const firstShownItem = await t.db.item.findFirstOrThrow({
      where: { threadId, role: "user", position: { gt: 0 } },
      orderBy: { position: "asc" },
      skip: Number(firstShown),
    });
    // Read at the answer (one more item), the window may have moved on by one exchange; never less is summarised.
    expect(through.position).toBeLessThan(firstShownItem.position);
    expect(through.position).toBeGreaterThanOrEqual(firstShownItem.position - 3);
  });

  it("learning from a message longer than the server reads: the cut prompt's reply is not trusted, a fitted one is", async () => {
    mock.contextLength = 1500;
    mock.overflow = "ollama-shift";
    const user = (await t.db.user.create({ data: { email: `limits-learn-${engine}@example.com` } })).id;
    mock.script({
      match: "latest exchange",
      json: { decisions: [{ op: "ADD", text: "Walks along the river every morning", kind: "fact" }] },
      times: 3,
    });
    const long = `I walk along the river every morning. ${"The water was calm and the light was soft. ".repeat(160)}`;
    await collect(runTurn(t.db, user, { kind: "send", content: long }));
    expect((await runDueJobs(t.db)).failed).toBe(0);
    const learning = mock.chatRequests().filter((r) => JSON.stringify(r.body).includes("Latest exchange"));
    expect(learning.length).toBe(2);
    expect(serverTokens(learning[0])).toBeGreaterThan(1500); // cut by the server: its reply is dropped
    expect(serverTokens(learning[1])).toBeLessThanOrEqual(1500);
    expect(lastOf(learning[1])).toContain("[… cut to fit the model's context …]");
    expect(systemOf(learning[1])).toContain("You maintain a user's long-term memory");
    const texts = (await t.db.memory.findMany({ where: { userId: user } })).map((m) => m.text);
    expect(texts).toEqual(["Walks along the river every morning"]);
  });

  it("a short chat that is still refused is not asked again: the user is told what to do", async () => {
    mock.contextLength = 40;
    const { user } = { user: (await t.db.user.create({ data: { email: `limits-short-${engine}@example.com` } })).id };
    const events = await collect(runTurn(t.db, user, { kind: "send", content: "Hello there" }));
    expect(events.at(-1)).toMatchObject({ type: "error" });
    expect((events.at(-1) as { message: string }).message).toMatch(/^This chat is now longer than the model can read/);
    expect(mock.chatRequests().filter((r) => lastOf(r) === "Hello there")).toHaveLength(1);
  });

  it("a server that reads the whole prompt changes nothing", async () => {
    const { user, threadId } = await longChat();
    const events = await ask(user, threadId, "What should I name my next dog?");
    expect(events.at(-1)).toMatchObject({ type: "done", item: { status: "complete", error: null } });
    expect(mock.chatRequests()).toHaveLength(1);
    expect(serverTokens(mock.chatRequests()[0])).toBeGreaterThan(4000);
  });
});
