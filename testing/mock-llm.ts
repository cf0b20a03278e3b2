// Mnemo's own OpenAI-compatible test server: real HTTP on loopback.
// - /v1/chat/completions (JSON and SSE streaming, tool calls, usage) and /v1/models
// - /v1/embeddings: deterministic vectors (hashed words; `mock-embed-<N>` gives N
//   dimensions, 64 otherwise); scripted "this text means that one" and faults
// - replies scripted per test (matched on the last user message), a default echo otherwise
// - every request recorded, readable over HTTP so tests can assert what the app sent
// - faults on demand: HTTP status (429, 500...), delays, a dropped stream, a malformed chunk; JSON mode refused
//   as LM Studio refuses it, tools as Ollama refuses them for a model without tool calling
// Control API (for tests in other processes): POST /__mock/replies, GET /__mock/requests,
// POST /__mock/reset. `npm run mock-llm` runs it alone for offline development.
import http from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptedReply = {
  /** Serve only requests whose last user message contains this (case-insensitive). */
  match?: string;
  /** Serve only requests whose system message contains this (tells a title request from extraction). */
  system?: string;
  content?: string;
  /** Shorthand for structured output: answered as JSON text. */
  json?: unknown;
  toolCalls?: Array<{ name: string; arguments: unknown; id?: string }>;
  /** Answer with this HTTP status and an OpenAI-shaped error body. */
  status?: number;
  /** That error body's message (a server's own words), instead of "mock fault: HTTP <status>". */
  errorMessage?: string;
  delayMs?: number;
  chunkDelayMs?: number;
  /** Streaming: close the connection after this many content chunks. */
  dropAfterChunks?: number;
  /** Streaming: after this many content chunks, send nothing more and keep the connection open (a stalled server). */
  stallAfterChunks?: number;
  /** Streaming: send one chunk that is not valid JSON after the first chunk. */
  malformedChunk?: boolean;
  /** The reply's finish_reason ("length": cut off by the token limit); "stop" or "tool_calls" otherwise. */
  finishReason?: string;
  /** How many requests this reply serves (default 1; 0 = every matching request). */
  times?: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
};

/** A scripted embedding: inputs containing `match` embed like `like` (a paraphrase), or the request fails/waits. */
export type ScriptedEmbedding = {
  match?: string;
  like?: string;
  status?: number;
  delayMs?: number;
  /** How many requests it serves (default: every one for `like`, 1 for a fault; 0 = every one). */
  times?: number;
};

export type RecordedRequest = {
  id: number;
  at: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
};

type Msg = { role: string; content?: unknown };

export function lastUserText(body: { messages?: Msg[] }): string {
  const msgs = body?.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role === "user") return textOf(msgs[i].content);
  }
  return "";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

/** One optional system message first, then user and assistant turns alternating (tool rounds part of the latter). */
function rolesAlternate(messages: Array<Msg & { tool_calls?: unknown[] }>): boolean {
  const turns: string[] = [];
  let inToolRound = false;
  for (const [i, m] of messages.entries()) {
    if (m.role === "system") {
      if (i > 0) return false;
      continue;
    }
    // An assistant's tool calls, their results and its answer after them are one assistant turn.
    if (m.role === "tool") {
      if (!inToolRound) turns.push("assistant");
      inToolRound = true;
      continue;
    }
    if (!(m.role === "assistant" && inToolRound)) turns.push(m.role);
    inToolRound = m.role === "assistant" && !!m.tool_calls?.length;
  }
  return turns.every((r, i) => r === (i % 2 === 0 ? "user" : "assistant"));
}

const approxTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class MockLlm {
  private server: http.Server;
  private replies: Array<ScriptedReply & { left: number }> = [];
  private embeddingScripts: Array<ScriptedEmbedding & { left: number }> = [];
  readonly requests: RecordedRequest[] = [];
  private nextId = 1;
  url = "";
  /**
   * Answer JSON mode (`response_format: json_object`) as LM Studio does: a 400 whose body is
   * `{"error": "'response_format.type' must be 'json_schema' or 'text'"}`. Set directly or by the control API.
   */
  refuseJsonMode = false;
  /**
   * Answer any request carrying `tools` as Ollama does for a model without tool calling: a 400 whose message is
   * "registry.ollama.ai/library/<model> does not support tools". Set directly or by the control API.
   */
  refuseTools = false;
  /**
   * Check roles as a strict chat template does (Mistral's, Gemma's on vLLM): at most one system message, first, then
   * user and assistant turns alternating (an assistant's tool calls and their results count as its turn); else a 400
   * "Conversation roles must alternate user/assistant/user/assistant/...".
   */
  strictRoles = false;
  /** Answer `stream_options` as older Azure API versions do: a 400 "Unrecognized request argument supplied". */
  refuseStreamOptions = false;
  /**
   * Answer a picture (an `image_url` content part) as OpenAI does for a model without image input: a 400 "Invalid
   * content type. image_url is only supported by certain models." Set directly or by the control API.
   */
  refuseImages = false;
  /** Answer a temperature other than 1 as OpenAI's reasoning models do: a 400 naming `temperature`. */
  refuseTemperature = false;
  /**
   * The model's context window (tokens as this server counts them: a quarter of the characters; 0: unlimited). A
   * chat request whose messages (and tools) are longer is answered as `overflow` says: "vllm" refuses with vLLM's
   * 400 ("This model's maximum context length is N tokens…"), "ollama" with Ollama's when context shift is off
   * ("the prompt is longer than the context length…", no size), "ollama-shift" as Ollama does by default: it keeps
   * the last `contextLength - (contextLength - 4) / 2` tokens' worth of messages, answers from those alone and
   * reports only them as prompt tokens. Set directly or by the control API.
   */
  contextLength = 0;
  overflow: "vllm" | "ollama" | "ollama-shift" = "vllm";
  /**
   * Report as prompt tokens only the part of a chat request after what it shares with the one before (its "cache"),
   * as Ollama 0.30.0 did (ollama/ollama#16428): a server whose count is not what it read.
   */
  uncachedUsage = false;
  private lastPrompt = "";
  /** Called as each request arrives (benchmarks mark "the model was called" with it). */
  onRequest?: (r: RecordedRequest) => void;

  constructor() {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: String(e) } }));
      });
    });
    // Longer than the client's idle sockets live, so a reused connection is never
    // closed under it (the race real servers avoid the same way).
    this.server.keepAliveTimeout = 65_000;
  }

  async listen(port = 0, host = "127.0.0.1"): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    const addr = this.server.address() as AddressInfo;
    this.url = `http://${host}:${addr.port}/v1`;
    return this.url;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  script(...replies: ScriptedReply[]) {
    for (const r of replies) this.replies.push({ ...r, left: r.times ?? 1 });
  }

  scriptEmbeddings(...scripts: ScriptedEmbedding[]) {
    for (const e of scripts) this.embeddingScripts.push({ ...e, left: e.times ?? (e.like !== undefined ? 0 : 1) });
  }

  embeddingRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path === "/v1/embeddings");
  }

  reset() {
    this.refuseJsonMode = false;
    this.refuseTools = false;
    this.refuseImages = false;
    this.refuseTemperature = false;
    this.strictRoles = false;
    this.refuseStreamOptions = false;
    this.contextLength = 0;
    this.overflow = "vllm";
    this.uncachedUsage = false;
    this.lastPrompt = "";
    this.replies = [];
    this.embeddingScripts = [];
    this.requests.length = 0;
  }

  chatRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path === "/v1/chat/completions");
  }

  /** Waits (at most `timeoutMs`) until a chat request containing `text` has arrived: a call the test races. */
  async chatRequestArrived(text: string, timeoutMs = 1000): Promise<boolean> {
    for (const until = Date.now() + timeoutMs; Date.now() < until; await sleep(10))
      if (this.chatRequests().some((r) => JSON.stringify(r.body).includes(text))) return true;
    return false;
  }

  private take(body: { messages?: Msg[] }): ScriptedReply | undefined {
    const text = lastUserText(body).toLowerCase();
    const system = (body?.messages ?? [])
      .filter((m) => m.role === "system")
      .map((m) => textOf(m.content))
      .join("\n")
      .toLowerCase();
    const i = this.replies.findIndex(
      (r) =>
        (!r.match || text.includes(r.match.toLowerCase())) && (!r.system || system.includes(r.system.toLowerCase())),
    );
    if (i < 0) return undefined;
    const r = this.replies[i];
    if (r.left > 0 && --r.left === 0) this.replies.splice(i, 1);
    return r;
  }

  /** How long a chat request is, as this server counts (its messages' and tools' text). */
  private promptLength(body: { messages?: Msg[]; tools?: unknown[] }): number {
    const tools = body?.tools?.length ? approxTokens(JSON.stringify(body.tools)) : 0;
    return (body?.messages ?? []).reduce((n, m) => n + approxTokens(textOf(m.content)), tools);
  }

  /** The error body for a prompt over the context window, when the server refuses such prompts. */
  private contextOverflow(body: { messages?: Msg[]; tools?: unknown[] }): object | null {
    const length = this.promptLength(body);
    if (!this.contextLength || length <= this.contextLength || this.overflow === "ollama-shift") return null;
    if (this.overflow === "ollama")
      return {
        error: {
          message:
            "the prompt is longer than the context length currently available to the model; shorten the prompt, " +
            "adjust the context length in settings, or use a model with a longer context length",
          type: "api_error",
          param: null,
          code: null,
        },
      };
    return {
      object: "error",
      message:
        `This model's maximum context length is ${this.contextLength} tokens. However, you requested ${length} ` +
        `tokens in the messages. Please reduce the length of the messages.`,
      type: "BadRequestError",
      param: null,
      code: 400,
    };
  }

  /** The messages Ollama's context shift keeps of a prompt over the window: the newest that fit its half. */
  private kept(body: { messages?: Msg[]; tools?: unknown[] }): Msg[] {
    const messages = body?.messages ?? [];
    if (this.promptLength(body) <= this.contextLength) return messages;
    const room = this.contextLength - Math.floor((this.contextLength - 4) / 2);
    const out: Msg[] = [];
    let left = room;
    for (let i = messages.length - 1; i >= 0 && left > 0; i--) {
      const text = textOf(messages[i].content);
      // The message that crosses the line is kept from where the kept tokens begin.
      out.unshift(approxTokens(text) <= left ? messages[i] : { ...messages[i], content: text.slice(-left * 4) });
      left -= approxTokens(text);
    }
    return out;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body from any client, read defensively
  private async embeddings(body: any, json: (status: number, value: unknown) => void) {
    const model = String(body?.model ?? "mock-embed");
    const dims = Number(/-(\d+)$/.exec(model)?.[1] ?? 64);
    const inputs: string[] = (Array.isArray(body?.input) ? body.input : [body?.input]).map((x: unknown) =>
      String(x ?? ""),
    );
    const spend = (e: ScriptedEmbedding & { left: number }) => {
      if (e.left > 0 && --e.left === 0) this.embeddingScripts.splice(this.embeddingScripts.indexOf(e), 1);
    };
    const fault = this.embeddingScripts.find(
      (e) =>
        (e.status || e.delayMs) && (!e.match || inputs.some((t) => t.toLowerCase().includes(e.match!.toLowerCase()))),
    );
    if (fault) {
      spend(fault);
      if (fault.delayMs) await sleep(fault.delayMs);
      if (fault.status)
        return json(fault.status, {
          error: { message: `mock fault: HTTP ${fault.status}`, type: "server_error", code: null },
        });
    }
    const data = inputs.map((text, index) => {
      const alias = this.embeddingScripts.find(
        (e) => e.like !== undefined && e.match && text.toLowerCase().includes(e.match.toLowerCase()),
      );
      let embedding = mockEmbedding(text, dims);
      if (alias) {
        spend(alias);
        // Mostly the scripted meaning, a little of its own words: close, not identical.
        const like = mockEmbedding(alias.like!, dims);
        const mixed = like.map((x, i) => 0.9 * x + 0.1 * embedding[i]);
        const n = Math.hypot(...mixed) || 1;
        embedding = mixed.map((x) => x / n);
      }
      return { object: "embedding", index, embedding };
    });
    const tokens = inputs.reduce((a, t) => a + approxTokens(t), 0);
    return json(200, { object: "list", model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- whatever JSON the client sent
  private async readBody(req: http.IncomingMessage): Promise<any> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    if (!raw) return undefined;
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? "/", "http://mock");
    const path = url.pathname;
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };

    // Control API
    if (path === "/__mock/replies" && req.method === "POST") {
      const body = await this.readBody(req);
      this.script(...((body?.replies ?? []) as ScriptedReply[]));
      this.scriptEmbeddings(...((body?.embeddings ?? []) as ScriptedEmbedding[]));
      if (typeof body?.refuseJsonMode === "boolean") this.refuseJsonMode = body.refuseJsonMode;
      if (typeof body?.refuseTools === "boolean") this.refuseTools = body.refuseTools;
      if (typeof body?.refuseImages === "boolean") this.refuseImages = body.refuseImages;
      if (typeof body?.refuseTemperature === "boolean") this.refuseTemperature = body.refuseTemperature;
      if (typeof body?.strictRoles === "boolean") this.strictRoles = body.strictRoles;
      if (typeof body?.refuseStreamOptions === "boolean") this.refuseStreamOptions = body.refuseStreamOptions;
      if (typeof body?.contextLength === "number") this.contextLength = body.contextLength;
      if (["vllm", "ollama", "ollama-shift"].includes(body?.overflow)) this.overflow = body.overflow;
      return json(200, { queued: this.replies.length });
    }
    if (path === "/__mock/requests" && req.method === "GET") {
      const since = Number(url.searchParams.get("since") ?? 0);
      return json(200, { requests: this.requests.filter((r) => r.id > since) });
    }
    if (path === "/__mock/reset" && req.method === "POST") {
      this.reset();
      return json(200, { ok: true });
    }
    if (path === "/__mock/health") return json(200, { ok: true });

    const body = await this.readBody(req);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
    const recorded = {
      id: this.nextId++,
      at: new Date().toISOString(),
      method: req.method ?? "GET",
      path,
      headers,
      body,
    };
    this.requests.push(recorded);
    this.onRequest?.(recorded);

    if (path === "/v1/models" && req.method === "GET") {
      return json(200, {
        object: "list",
        data: ["mock-chat", "mock-memory", "mock-embed"].map((id) => ({
          id,
          object: "model",
          created: 0,
          owned_by: "mnemo-mock",
        })),
      });
    }
    if (path === "/v1/embeddings" && req.method === "POST") return this.embeddings(body, json);
    if (path !== "/v1/chat/completions" || req.method !== "POST") {
      return json(404, { error: { message: `mock: no route ${req.method} ${path}`, type: "invalid_request_error" } });
    }

    if (this.refuseJsonMode && body?.response_format?.type === "json_object")
      return json(400, { error: "'response_format.type' must be 'json_schema' or 'text'" });
    if (this.refuseStreamOptions && body?.stream_options)
      return json(400, {
        error: {
          message: "Unrecognized request argument supplied: stream_options",
          type: "invalid_request_error",
          param: null,
          code: null,
        },
      });
    if (this.strictRoles && !rolesAlternate(body?.messages ?? []))
      return json(400, {
        object: "error",
        message: "Conversation roles must alternate user/assistant/user/assistant/...",
        type: "BadRequestError",
        param: null,
        code: 400,
      });
    if (this.refuseTemperature && typeof body?.temperature === "number" && body.temperature !== 1)
      return json(400, {
        error: {
          message: `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
          type: "invalid_request_error",
          param: "temperature",
          code: "unsupported_value",
        },
      });
    const picture = (body?.messages ?? []).findIndex(
      (m: { content?: unknown }) =>
        Array.isArray(m.content) && m.content.some((p: { type?: string }) => p?.type === "image_url"),
    );
    if (this.refuseImages && picture >= 0)
      return json(400, {
        error: {
          message: "Invalid content type. image_url is only supported by certain models.",
          type: "invalid_request_error",
          param: `messages.[${picture}].content.[1].type`,
          code: null,
        },
      });
    if (this.refuseTools && Array.isArray(body?.tools) && body.tools.length)
      return json(400, {
        error: {
          message: `registry.ollama.ai/library/${body.model} does not support tools`,
          type: "api_error",
          param: null,
          code: null,
        },
      });
    const overflow = this.contextOverflow(body);
    if (overflow) return json(400, overflow);
    // With context shift, the model answers from what it kept of the prompt: the start is gone.
    const seen = this.contextLength && this.overflow === "ollama-shift" ? { ...body, messages: this.kept(body) } : body;
    const reply = this.take(seen) ?? { content: `Mock answer to: ${lastUserText(seen)}` };
    if (reply.delayMs) await sleep(reply.delayMs);
    if (reply.status) {
      return json(reply.status, {
        error: {
          message: reply.errorMessage ?? `mock fault: HTTP ${reply.status}`,
          type: reply.status === 429 ? "rate_limit_error" : "server_error",
          code: null,
        },
      });
    }

    const model = body?.model ?? "mock-chat";
    const content = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.content ?? "");
    const toolCalls = (reply.toolCalls ?? []).map((t, i) => ({
      id: t.id ?? `call_${this.nextId}_${i}`,
      type: "function" as const,
      function: {
        name: t.name,
        arguments: typeof t.arguments === "string" ? t.arguments : JSON.stringify(t.arguments),
      },
    }));
    const promptText = (seen?.messages ?? []).map((m: Msg) => textOf(m.content)).join("\n");
    const cached = this.uncachedUsage ? sharedPrefix(this.lastPrompt, promptText) : 0;
    this.lastPrompt = promptText;
    const usage = reply.usage ?? {
      prompt_tokens: approxTokens(promptText.slice(cached)),
      completion_tokens: approxTokens(content + toolCalls.map((t) => t.function.arguments).join("")),
    };
    const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
    const finish = reply.finishReason ?? (toolCalls.length ? "tool_calls" : "stop");
    const id = `chatcmpl-mock-${this.nextId}`;
    const created = Math.floor(Date.now() / 1000);

    if (!body?.stream) {
      return json(200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: toolCalls.length && !content ? null : content,
              ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: finish,
          },
        ],
        usage: fullUsage,
      });
    }

    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const send = (delta: object, finishReason: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
      );
    send({ role: "assistant", content: "" });
    const pieces = content.match(/\S+\s*|\s+/g) ?? [];
    let sent = 0;
    for (const piece of pieces) {
      if (reply.chunkDelayMs) await sleep(reply.chunkDelayMs);
      if (res.destroyed) return;
      send({ content: piece });
      sent++;
      if (reply.malformedChunk && sent === 1) res.write(`data: {"id": "broken", "choices": [\n\n`);
      if (reply.stallAfterChunks !== undefined && sent >= reply.stallAfterChunks) {
        await new Promise((resolve) => res.once("close", resolve));
        return;
      }
      if (reply.dropAfterChunks !== undefined && sent >= reply.dropAfterChunks) {
        res.socket?.destroy();
        return;
      }
    }
    toolCalls.forEach((t, index) => {
      send({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.function.name, arguments: "" } }] });
      send({ tool_calls: [{ index, function: { arguments: t.function.arguments } }] });
    });
    send({}, finish);
    if (body?.stream_options?.include_usage) {
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage: fullUsage })}\n\n`,
      );
    }
    res.write("data: [DONE]\n\n");
    res.end();
  }
}

const STOP = new Set(
  "a an the and or but is are was were be been am i me my mine you your we our it its of to in on at for with do does did have has had what which who how when where why this that there".split(
    " ",
  ),
);

/** A deterministic unit vector: each word (lower-cased, plural s dropped) hashed to a signed dimension. */
export function mockEmbedding(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP.has(raw)) continue;
    const w = raw.length > 3 ? raw.replace(/s$/, "") : raw;
    let h = 2166136261;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619) >>> 0;
    v[h % dims] += h & 0x80000000 ? -1 : 1;
  }
  const n = Math.hypot(...v);
  if (!n) v[0] = 1;
  return n ? v.map((x) => x / n) : v;
}

export async function startMockLlm(port = 0): Promise<MockLlm> {
  const m = new MockLlm();
  await m.listen(port);
  return m;
}

/** How many characters two texts share from their start. */
function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
