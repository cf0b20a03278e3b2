// How much of a prompt a model server reads, learned from what it does and kept for the process (like the refused
// features in server-quirks.ts), so the next turns are fitted to it instead of failing or being cut:
// - vLLM, LM Studio, llama.cpp and Ollama without context shift refuse a prompt longer than the model's context with
//   a 400 ("This model's maximum context length is 4096 tokens…", "the prompt is longer than the context length
//   currently available to the model…"). The turn is asked again at once with less history.
// - Ollama with context shift (its default on most machines) does not refuse: it drops the start of the prompt,
//   where Mnemo's instructions and the user's memories are, answers with a 200 and reports only what it kept
//   (prompt_eval_count = about half its context; ollama/ollama#3839, #17427). Mnemo sees the reported prompt far
//   below what it sent, says so under the answer, and sends later turns within what was read.
// A limit is trusted for an hour: a server can be given a longer context without restarting Mnemo.
import type { ModelConnection } from "./connection";
import { REFUSAL_TTL_MS, serverKey } from "./server-quirks";
import { countTokens, MESSAGE_OVERHEAD } from "@/lib/memory/tokens";

/** Server and model → the prompt size (Mnemo's tokens) to stay within, and when it was learned. */
const limits = new Map<string, { tokens: number; at: number }>();

/** Below this, a prompt is not made smaller: it holds little more than the instructions and the question. */
export const MIN_PROMPT_TOKENS = 1_000;
/** A reported prompt under this share of what Mnemo counted was cut by the server (tokenizers differ by less). */
const CUT_SHARE = 0.6;
/** Of a refused context's size, what a prompt may take: the rest is the answer's. */
const PROMPT_SHARE = 0.75;
/** Each further fitting of a prompt that still did not fit takes at most this share of it. */
const SHRINK = 0.8;

/** The prompt size this server and model are known to read whole, if any (within the last hour). */
export function knownPromptLimit(conn: Pick<ModelConnection, "baseURL">, model: string): number | null {
  const key = serverKey(conn, model);
  const seen = limits.get(key);
  if (!seen) return null;
  if (Date.now() - seen.at < REFUSAL_TTL_MS) return seen.tokens;
  limits.delete(key);
  return null;
}

function remember(conn: Pick<ModelConnection, "baseURL">, model: string, tokens: number): number {
  const known = knownPromptLimit(conn, model);
  const next = Math.max(MIN_PROMPT_TOKENS, Math.floor(Math.min(known ?? Infinity, tokens)));
  limits.set(serverKey(conn, model), { tokens: next, at: Date.now() });
  return next;
}

/**
 * After a refusal of a prompt of `sent` tokens (as Mnemo counts): the size to ask again at, or null when the prompt
 * is already as small as Mnemo makes it. `context` is the window the server named (0: it did not say).
 */
export function fitAfterRefusal(
  conn: Pick<ModelConnection, "baseURL">,
  model: string,
  sent: number,
  context: number,
): number | null {
  if (sent <= MIN_PROMPT_TOKENS) return null;
  // The server counts with its own tokenizer, so a prompt Mnemo counts under the window can still be over it.
  const target = context > 0 ? Math.min(context * PROMPT_SHARE, sent * SHRINK) : sent / 2;
  return remember(conn, model, target);
}

/**
 * Whether the server reported reading far fewer prompt tokens than were sent (it cut the prompt); if so, later
 * prompts are fitted within what it read.
 */
export function noteReportedPrompt(
  conn: Pick<ModelConnection, "baseURL">,
  model: string,
  sent: number,
  reported: number,
): boolean {
  if (!promptWasCut(sent, reported)) return false;
  remember(conn, model, Math.min(reported * 0.9, sent * SHRINK));
  return true;
}

/** A prompt the server read only part of: it reported under CUT_SHARE of what was sent (and something was sent). */
export const promptWasCut = (sent: number | null | undefined, reported: number | null | undefined): boolean =>
  !!sent && !!reported && sent > MIN_PROMPT_TOKENS && reported < sent * CUT_SHARE;

/** About what a chat request's messages (and the tools offered) cost, counted with Mnemo's tokenizer. */
export function promptTokens(messages: Array<{ content?: unknown }>, tools?: unknown[]): number {
  let n = tools?.length ? countTokens(JSON.stringify(tools)) : 0;
  for (const m of messages) {
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");
    n += MESSAGE_OVERHEAD + countTokens(text) + toolCallTokens(m);
  }
  return n;
}
const toolCallTokens = (m: object) =>
  "tool_calls" in m && Array.isArray(m.tool_calls) ? countTokens(JSON.stringify(m.tool_calls)) : 0;

/**
 * The memory and history budgets for a prompt of at most `limit` tokens, around `fixed` tokens that are always
 * sent (the instructions and the tools): memory at most a quarter of it, the history the rest. Never more than the
 * configured budgets.
 */
export function fittedBudgets(
  limit: number | null,
  configured: { memory: number; history: number },
  fixed: number,
): { memory: number; history: number } {
  if (limit === null) return configured;
  const memory = Math.min(configured.memory, Math.floor(limit / 4));
  return { memory, history: Math.max(0, Math.min(configured.history, limit - fixed - memory)) };
}

/** Forgets every learned limit (tests). */
export function forgetPromptLimits(): void {
  limits.clear();
}
