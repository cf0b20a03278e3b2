// Token counting with a real tokenizer (o200k_base, the GPT-4o family's), used
// for budgets. Other models tokenize differently; budgets keep a safety margin.
import { countTokens as count } from "gpt-tokenizer/encoding/o200k_base";

/** Per-message overhead the chat format adds (role, separators). */
export const MESSAGE_OVERHEAD = 4;

/**
 * Byte-pair encoding's cost grows with the square of one word's length (20,000
 * characters without a space took 0.5–1.6 s, 100,000 took 10 s, all of it
 * blocking the server), so runs of non-space characters this long are counted
 * in slices: a few tokens more than exact at each cut, which only errs on the
 * safe side of a budget.
 */
const LONG_RUN = 256;
const SLICE = 128;
const longRuns = new RegExp(`\\S{${LONG_RUN},}`, "g");

/**
 * The counts of the longer texts counted lately, by the text's length and a hash of it (not the text: a user's words
 * are not kept past their use). A turn counts the same history again (its prompt, after the answer, to see whether
 * the server read it all), and that recount was the largest slice of the server's own time per turn (#55).
 */
const counted = new Map<string, number>();
const COUNTED_KEPT = 50_000;
const COUNTED_FROM = 64;

/** cyrb53: a fast 53-bit string hash (collisions among a few thousand texts: about one in a billion). */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export function countTokens(text: string): number {
  if (!text) return 0;
  if (text.length < COUNTED_FROM) return counting(text);
  const key = `${text.length}:${hash53(text)}`;
  let n = counted.get(key);
  if (n === undefined) {
    n = counting(text);
    if (counted.size >= COUNTED_KEPT) counted.delete(counted.keys().next().value!);
  } else counted.delete(key); // most recently used last
  counted.set(key, n);
  return n;
}

function counting(text: string): number {
  if (text.length < LONG_RUN || !longRuns.test(text)) return count(text);
  longRuns.lastIndex = 0;
  let total = 0;
  let last = 0;
  for (const m of text.matchAll(longRuns)) {
    total += count(text.slice(last, m.index));
    for (const piece of slices(m[0])) total += count(piece);
    last = m.index + m[0].length;
  }
  return total + count(text.slice(last));
}

/** SLICE-long pieces, never cutting a surrogate pair in half. */
function* slices(run: string): Generator<string> {
  for (let i = 0; i < run.length;) {
    let end = Math.min(run.length, i + SLICE);
    if (end < run.length && /[\uD800-\uDBFF]/.test(run[end - 1])) end--;
    yield run.slice(i, end);
    i = end;
  }
}

/** Up to this many characters a text is counted exactly by `estimateTokens`; past it, sampled. */
const EXACT_CHARS = 30_000;
const SAMPLES = 10;

/**
 * About how many tokens a text of any length is: exact up to EXACT_CHARS, past it ten samples spread over it (from
 * start to end) counted and scaled to the whole. Counting 7 MB of varied words exactly blocked the server for 9 s; a
 * prompt's size only has to be right within a few percent (lib/llm/prompt-limits.ts).
 */
export function estimateTokens(text: string): number {
  if (text.length <= EXACT_CHARS) return countTokens(text);
  const size = Math.floor(EXACT_CHARS / SAMPLES);
  let tokens = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const at = Math.floor(((text.length - size) * i) / (SAMPLES - 1));
    tokens += countTokens(text.slice(at, at + size));
  }
  return Math.ceil((tokens * text.length) / (size * SAMPLES));
}

/** A stored message's size for the budgets (estimated past a few pages: a model's answer can run to megabytes). */
export function messageTokens(content: string, extra = ""): number {
  return estimateTokens(content) + (extra ? estimateTokens(extra) : 0) + MESSAGE_OVERHEAD;
}
