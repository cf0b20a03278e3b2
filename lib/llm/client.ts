// The one place that builds an `openai` SDK client. Works with OpenAI and any
// OpenAI-compatible server (Ollama, vLLM, LM Studio, Azure's v1 endpoint,
// Gemini's compatible endpoint): only baseURL, key and model names differ.
import OpenAI from "openai";
import type { ModelConnection } from "./connection";

export function openaiClient(conn: ModelConnection, opts: { timeoutMs?: number; maxRetries?: number } = {}): OpenAI {
  return new OpenAI({
    // Local servers (Ollama, LM Studio) need no key, but the SDK requires one.
    apiKey: conn.apiKey || "not-needed",
    baseURL: conn.baseURL,
    timeout: opts.timeoutMs ?? 120_000,
    maxRetries: opts.maxRetries ?? 1,
  });
}

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
    return { ok: false, error: describeModelError(e) };
  }
}

/** One readable line for a failed model call (shown to users and admins). */
export function describeModelError(e: unknown): string {
  if (e instanceof OpenAI.APIError) {
    if (e.status === 401) return "The model server rejected the API key (401).";
    if (e.status === 404) return "The model server does not know this model or endpoint (404).";
    if (e.status === 429) return "The model server is rate-limiting requests (429). Try again shortly.";
    if (e.status && e.status >= 500) return `The model server failed (${e.status}). Try again.`;
    if (e instanceof OpenAI.APIConnectionError) return "Could not reach the model server.";
    return `The model server answered with an error${e.status ? ` (${e.status})` : ""}: ${e.message}`;
  }
  return `The model call failed: ${(e as Error)?.message ?? String(e)}`;
}
