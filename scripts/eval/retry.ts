// A real run of eval:locomo makes thousands of model calls over hours; one rate limit or one 502 must not end it.
// Transient failures (rate limits, server errors, timeouts, dropped connections) are retried with exponential
// backoff, honouring the server's Retry-After; anything else (a wrong key, a missing model) stops the run at once.
import OpenAI from "openai";

export type RetryOptions = { attempts?: number; baseMs?: number; maxMs?: number; log?: (line: string) => void };

/** Whether a failed model call may succeed if made again. */
export function transient(e: unknown): boolean {
  if (e instanceof OpenAI.APIConnectionError) return true; // includes timeouts
  if (e instanceof OpenAI.APIError)
    return e.status === undefined || [408, 409, 429].includes(e.status) || e.status >= 500;
  return false;
}

/** How long the server asked us to wait (Retry-After, in seconds or as a date), if it did. */
function retryAfterMs(e: unknown): number | null {
  const h = e instanceof OpenAI.APIError ? e.headers?.get?.("retry-after") : null;
  if (!h) return null;
  const s = Number(h);
  if (Number.isFinite(s)) return s * 1000;
  const at = Date.parse(h);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : null;
}

export async function withRetries<T>(what: string, fn: () => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const attempts = o.attempts ?? 8;
  const base = o.baseMs ?? 2000;
  const max = o.maxMs ?? 120_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= attempts || !transient(e)) throw e;
      const wait = Math.min(max, retryAfterMs(e) ?? base * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
      o.log?.(`  ${what}: ${(e as Error).message.slice(0, 120)}; again in ${Math.round(wait / 1000)} s`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
