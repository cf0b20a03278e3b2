// How much of a prompt a model server reads, learned from what it does and shared by every app instance (like the
// refused features in server-quirks.ts; lib/llm/server-notes.ts), so the next turns are fitted to it instead of
// failing or being cut:
// - vLLM, LM Studio, llama.cpp and Ollama without context shift refuse a prompt longer than the model's context with
//   a 400 ("This model's maximum context length is 4096 tokens…", "the prompt is longer than the context length
//   currently available to the model…"). The turn is asked again at once with less history.
// - Ollama with context shift (its default on most machines) does not refuse: it drops the start of the prompt,
//   where Mnemo's instructions and the user's memories are, answers with a 200 and reports only what it kept
//   (prompt_eval_count = about half its context; ollama/ollama#3839, #17427). Mnemo sees the reported prompt far
//   below what it sent, says so under the answer, and sends later turns within what was read.
// A limit is trusted for an hour: a server can be given a longer context without restarting Mnemo.
// A server whose reported prompt tokens are not what it read (Ollama 0.30.0 counted only the part of a prompt its
// cache did not hold, ollama/ollama#16428) looks like one that cut the prompt. It gives itself away on the next turn:
// a prompt already fitted within what it "read" is reported far short again. Its counts are then ignored (for the
// same hour) and its limit forgotten: one answer carries a needless warning, one turn is sent shorter.
import type { ModelConnection } from "./connection";
import { serverKey } from "./server-quirks";
import { forgetLocally, readNote, writeNote } from "./server-notes";
import { countTokens, estimateTokens, MESSAGE_OVERHEAD } from "@/lib/memory/tokens";
import { cutGraphemes } from "@/lib/text/policy";
import { contextLimit } from "./client";

/** Below this, a prompt is not made smaller: it holds little more than the instructions and the question. */
export const MIN_PROMPT_TOKENS = 1_000;
/** A reported prompt under this share of what Mnemo counted was cut by the server (tokenizers differ by less). */
const CUT_SHARE = 0.6;
/** Of a refused context's size, what a prompt may take: the rest is the answer's. */
const PROMPT_SHARE = 0.75;
/** Each further fitting of a prompt that still did not fit takes at most this share of it. */
const SHRINK = 0.8;

/** The prompt size this server and model are known to read whole, if any (within the last hour). */
export function knownPromptLimit(
  conn: Pick<ModelConnection, "baseURL"> & Partial<Pick<ModelConnection, "chatModel" | "chatContextTokens">>,
  model: string,
): number | null {
  // The prompt size to stay within (Mnemo's tokens); a note without one: the limit was forgotten.
  const learned = readNote(serverKey(conn, model), "promptLimit")?.tokens ?? null;
  // The context the admin gave the model (lib/llm/models.ts), less the answer's share.
  const stated =
    conn.chatModel === model && conn.chatContextTokens ? Math.floor(conn.chatContextTokens * PROMPT_SHARE) : null;
  return learned === null ? stated : stated === null ? learned : Math.min(learned, stated);
}

function remember(conn: Pick<ModelConnection, "baseURL">, model: string, tokens: number): number {
  const known = knownPromptLimit(conn, model);
  const next = Math.max(MIN_PROMPT_TOKENS, Math.floor(Math.min(known ?? Infinity, tokens)));
  writeNote(serverKey(conn, model), "promptLimit", next);
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
  const key = serverKey(conn, model);
  if (readNote(key, "untrustedUsage")) return false;
  const known = knownPromptLimit(conn, model);
  // Within what the server was found to read, it reads the whole prompt: if it reports far less, its count is not
  // what it read.
  if (known !== null && sent <= known) {
    if (reported > 0 && reported < sent * CUT_SHARE) {
      writeNote(key, "untrustedUsage");
      writeNote(key, "promptLimit", null);
    }
    return false;
  }
  if (!promptWasCut(sent, reported)) return false;
  remember(conn, model, Math.min(reported * 0.9, sent * SHRINK));
  return true;
}

/** A prompt the server read only part of: it reported under CUT_SHARE of what was sent (and something was sent). */
export const promptWasCut = (sent: number | null | undefined, reported: number | null | undefined): boolean =>
  !!sent && !!reported && sent > MIN_PROMPT_TOKENS && reported < sent * CUT_SHARE;

/** About what a chat request's messages (and the tools offered) cost, counted with Mnemo's tokenizer. */
export function promptTokens(messages: Array<{ content?: unknown }>, tools?: unknown[]): number {
  // Estimated past a few pages (an API client may send megabytes): a size, not a budget's exact count.
  let n = tools?.length ? estimateTokens(JSON.stringify(tools)) : 0;
  for (const m of messages) {
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");
    n += MESSAGE_OVERHEAD + estimateTokens(text) + toolCallTokens(m);
  }
  return n;
}
const toolCallTokens = (m: object) =>
  "tool_calls" in m && Array.isArray(m.tool_calls) ? estimateTokens(JSON.stringify(m.tool_calls)) : 0;

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

/** Forgets every learned limit in this process (a test starts; the admin's save forgets them everywhere). */
export function forgetPromptLimits(): void {
  forgetLocally(["promptLimit", "untrustedUsage"]);
}

type Completion = { usage?: { prompt_tokens: number } | null };
/** A prompt this server does not read whole: the size (Mnemo's tokens) to send it again within. */
export type TooLong = { tooLong: number };

/**
 * One non-streamed call (the memory model's background work) within what the server reads: a prompt over a known
 * limit is not sent; a refusal for length, or a reply to a prompt the server cut (not to be trusted: its
 * instructions were what went), gives the size to send it again within, for the caller to shorten its input to.
 */
export async function callWithinLimit<T extends Completion>(
  conn: Pick<ModelConnection, "baseURL">,
  model: string,
  messages: Array<{ content?: unknown }>,
  call: () => Promise<T>,
): Promise<T | TooLong> {
  const sent = promptTokens(messages);
  const known = knownPromptLimit(conn, model);
  if (known !== null && sent > known) return { tooLong: known };
  let res: T;
  try {
    res = await call();
  } catch (e) {
    const context = contextLimit(e);
    const target = context === null ? null : fitAfterRefusal(conn, model, sent, context);
    if (target === null) throw e;
    return { tooLong: target };
  }
  if (res.usage && noteReportedPrompt(conn, model, sent, res.usage.prompt_tokens))
    return { tooLong: knownPromptLimit(conn, model) ?? MIN_PROMPT_TOKENS };
  return res;
}

export const isTooLong = (r: object): r is TooLong => "tooLong" in r;

/**
 * `text` cut to about `tokens` tokens, its start and end kept (a header and the newest part), the cut marked; as
 * it is when it fits. A long text is sized by estimate (counting 7 MB exactly held the server for 0.4 s) and the cut
 * is then counted exactly, shrunk until it fits.
 */
export function cutToTokens(text: string, tokens: number): string {
  let has = estimateTokens(text);
  if (has <= tokens * 1.1 && (has = countTokens(text)) <= tokens) return text;
  let keep = Math.max(0, tokens - CUT_MARK_TOKENS);
  for (let tries = 0; ; tries++) {
    const cut = cutAround(text, Math.floor((text.length * keep) / has));
    const took = countTokens(cut);
    if (took <= tokens || tries === 4 || keep === 0) return cut;
    keep = Math.floor(keep * Math.min(0.95, tokens / took));
  }
}

/** About `chars` characters of `text`: 60% from its start, 40% from its end, the cut marked between. */
function cutAround(text: string, chars: number): string {
  const head = cutGraphemes(text, Math.ceil(chars * 0.6));
  let from = text.length - Math.floor(chars * 0.4);
  if (/[\uDC00-\uDFFF]/.test(text[from] ?? "")) from++; // not half a character
  return `${head}${CUT_MARK}${text.slice(from)}`;
}
const CUT_MARK = "\n[… cut to fit the model's context …]\n";
const CUT_MARK_TOKENS = 12;
