// The one place that builds an `openai` SDK client. Works with OpenAI and any
// OpenAI-compatible server (Ollama, vLLM, LM Studio, Azure's v1 endpoint,
// Gemini's compatible endpoint): only baseURL, key and model names differ.
import { refusesFeature } from "./server-quirks";
import OpenAI from "openai";
import type { ModelConnection } from "./connection";
import { classifyModelFailure, modelFailureText, serverAddress } from "./model-failure";

export function openaiClient(conn: ModelConnection, opts: { timeoutMs?: number; maxRetries?: number } = {}): OpenAI {
  // Local servers (Ollama, LM Studio) need no key, but the SDK requires one.
  const apiKey = conn.apiKey || "not-needed";
  const timeout = opts.timeoutMs ?? 120_000;
  const maxRetries = opts.maxRetries ?? 1;
  const key = JSON.stringify([conn.baseURL, apiKey, timeout, maxRetries]);
  let client = clients.get(key);
  if (client) clients.delete(key); // the most recently used go last
  // The global fetch as it is at each call (the SDK would keep the one there when it was made).
  client ??= new OpenAI({ apiKey, baseURL: conn.baseURL, timeout, maxRetries, fetch: (url, init) => fetch(url, init) });
  clients.set(key, client);
  if (clients.size > CLIENTS_KEPT) clients.delete(clients.keys().next().value!);
  return client;
}

/**
 * Clients by server, key and settings, reused: a new client's first request reached a local server 0.5 ms later than
 * a reused one's (the SDK's setup per client), on every model call of every turn (docs/benchmarks.md, stop 49).
 */
const clients = new Map<string, OpenAI>();
/** Servers and keys in use at once: an instance serves one or a few; users' own connections add theirs. */
const CLIENTS_KEPT = 64;

/** Lists the server's models: the admin page's "Test connection". */
export async function testConnection(
  conn: ModelConnection,
): Promise<{ ok: true; models: string[] } | { ok: false; error: string }> {
  try {
    const list = await openaiClient(conn, { timeoutMs: 10_000, maxRetries: 0 }).models.list();
    const models: string[] = [];
    for await (const m of list) models.push(m.id);
    return { ok: true, models };
  } catch (e) {
    return { ok: false, error: describeModelError(e, conn.baseURL) };
  }
}

/**
 * A 400 saying the prompt is longer than the model's context window (OpenAI's `context_length_exceeded`, vLLM's and
 * llama.cpp's "maximum context length is N tokens"): the window's size when the message gives it, 0 when not; null
 * for any other error.
 */
export function contextLimit(e: unknown): number | null {
  if (!(e instanceof OpenAI.APIError) || (e.status !== 400 && e.status !== 413)) return null;
  const text = `${e.code ?? ""} ${e.message}`;
  if (!/context[_ ]length|context window|maximum context|exceeds? the (?:available )?context/i.test(text)) return null;
  const n = /(?:context length|context window|context size)(?: is| of)?(?: only)?\s*(\d[\d,]*)/i.exec(text)?.[1];
  return n ? Number(n.replaceAll(",", "")) : 0;
}

/**
 * One readable line for a failed model call: what failed and where (lib/llm/model-failure.ts), with the
 * administrator's next step when `forAdmin`.
 */
export function describeModelError(e: unknown, baseURL?: string, forAdmin = true): string {
  const f = classifyModelFailure(e, baseURL);
  if (f && f.kind !== "refused-request") return modelFailureText(f, forAdmin);
  if (e instanceof OpenAI.APIError) {
    const limit = contextLimit(e);
    if (limit !== null)
      return `This chat is now longer than the model can read at once${limit ? ` (${limit.toLocaleString("en")} tokens)` : ""}. Start a new chat (Mnemo remembers what matters), or ask your administrator to lower MNEMO_HISTORY_TOKEN_BUDGET or choose a model with a longer context.`;
    return `The model server at ${serverAddress(baseURL)} answered with an error${e.status ? ` (${e.status})` : ""}: ${e.message}`;
  }
  return `The model call failed: ${(e as Error)?.message ?? String(e)}`;
}

/** A 1×1 PNG: the smallest picture a probe can send. */
const PROBE_PICTURE =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/**
 * Whether the server takes a picture for this model: one tiny request with an image part. A refusal that names
 * images says no; an answer says yes (a server that drops pictures silently, as some do for text-only models, also
 * answers: the admin can still untick "sees images").
 */
export async function probeImages(
  conn: ModelConnection,
  model: string,
): Promise<{ ok: true; vision: boolean } | { ok: false; error: string }> {
  try {
    await openaiClient(conn, { timeoutMs: 30_000, maxRetries: 0 }).chat.completions.create({
      model,
      max_tokens: 5,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What colour is this picture? One word." },
            { type: "image_url", image_url: { url: PROBE_PICTURE } },
          ],
        },
      ],
    });
    return { ok: true, vision: true };
  } catch (e) {
    if (refusesFeature("images", e)) return { ok: true, vision: false };
    return { ok: false, error: describeModelError(e, conn.baseURL) };
  }
}
