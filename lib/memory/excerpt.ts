// Excerpts of long messages for recall. A pasted document or a long answer
// (common in histories imported from other chat apps) would otherwise take
// the whole memory budget as one passage line, or never fit at all, so
// nothing of it could be recalled. Instead a line shows the sentences that
// match the question best (else the message's start), with "…" where text was
// left out, within a token cap.
import { indexWords, SEARCH_CHARS } from "@/lib/crypto/content";

const ELLIPSIS = "…";
/** Tokens kept free for the two "…" marks. */
const MARK_TOKENS = 2;

/**
 * The message's best part within about `maxTokens` tokens. `tokens` is the
 * message's stored token count: sentence costs are estimated from it (the
 * tokenizer runs once, on the finished excerpt, where the caller counts it).
 */
export function excerpt(whole: string, tokens: number, asked: ReadonlySet<string>, maxTokens: number): string {
  if (tokens <= maxTokens) return whole;
  const perChar = tokens / Math.max(1, whole.length);
  const cost = (s: string) => Math.ceil(s.length * perChar) + 1;
  // The search found it by its first SEARCH_CHARS characters (a stored message can be a million): the best part is
  // there, and reading no further keeps a turn's recall as quick as for any message.
  const text = whole.length > SEARCH_CHARS ? whole.slice(0, SEARCH_CHARS) : whole;
  const units = sentences(text);
  const unread = text !== whole; // the excerpt's end says "…" even when it reaches the last sentence read
  const budget = maxTokens - MARK_TOKENS;
  const best = bestUnit(units, asked);
  if (cost(units[best]) > budget) {
    const cut = cutWords(units[best], asked, budget, cost, perChar);
    return mark(cut.text, best > 0 || cut.start, best < units.length - 1 || cut.end || unread);
  }
  let lo = best;
  let hi = best;
  let total = cost(units[best]);
  // Grow around the best sentence, a sentence after it then one before, while they fit.
  for (let turn = 0; ; turn++) {
    const after = hi + 1 < units.length && total + cost(units[hi + 1]) <= budget;
    const before = lo > 0 && total + cost(units[lo - 1]) <= budget;
    if (after && (turn % 2 === 0 || !before)) total += cost(units[++hi]);
    else if (before) total += cost(units[--lo]);
    else break;
  }
  return mark(units.slice(lo, hi + 1).join(" "), lo > 0, hi < units.length - 1 || unread);
}

const mark = (s: string, start: boolean, end: boolean) =>
  `${start ? `${ELLIPSIS} ` : ""}${s}${end ? ` ${ELLIPSIS}` : ""}`;

/**
 * Sentences: text up to a full stop, question or exclamation mark (with any
 * closing quote or bracket) before a space, or up to a line break (lists and
 * code have no full stops). A regular expression, not Intl.Segmenter, which
 * took ~60 ms on a 100,000-character message.
 */
function sentences(text: string): string[] {
  const out = (text.match(SENTENCE) ?? []).map((s) => s.trim()).filter(Boolean);
  return out.length ? out : [text.trim()];
}
const SENTENCE = /[^\n]+?(?:[.!?…]+["'”’)\]]*(?=\s)|(?=\n)|$)/g;

/** The sentence holding most of the question's (stemmed) words; the first one when none does. */
function bestUnit(units: string[], asked: ReadonlySet<string>): number {
  if (!asked.size) return 0;
  // Each distinct word is stemmed once (a long message repeats most of its words), and only when
  // its first two letters are an asked stem's: stemming changes endings, never the start.
  const heads = new Set([...asked].map((a) => a.slice(0, 2)));
  const stems = new Map<string, string | undefined>();
  const stemOf = (w: string) => {
    if (!stems.has(w)) stems.set(w, indexWords(w)[0]);
    return stems.get(w);
  };
  let best = 0;
  let bestScore = 0;
  units.forEach((u, i) => {
    const found = new Set<string>();
    for (const w of u.toLowerCase().match(WORD) ?? []) {
      if (!heads.has(w.slice(0, 2))) continue;
      const stem = stemOf(w);
      if (stem && asked.has(stem)) found.add(stem);
    }
    if (found.size > bestScore) [best, bestScore] = [i, found.size];
  });
  return best;
}
/** What indexWords counts as a word. */
const WORD = /[\p{L}\p{N}]+/gu;

/** A sentence too long for the cap: the words around its first match (else its start). */
function cutWords(
  sentence: string,
  asked: ReadonlySet<string>,
  budget: number,
  cost: (s: string) => number,
  perChar: number,
) {
  const words = sentence.split(/\s+/);
  const hit = Math.max(
    0,
    words.findIndex((w) => indexWords(w).some((s) => asked.has(s))),
  );
  // Start a few words before the match, so it reads as part of a sentence.
  let lo = Math.max(0, hit - 8);
  let hi = lo;
  let total = cost(words[lo]);
  // One "word" longer than the cap (a URL, a blob): its first characters.
  if (total > budget) return { text: codePoints(words[lo], Math.floor(budget / perChar)), start: lo > 0, end: true };
  while (hi + 1 < words.length && total + cost(words[hi + 1]) <= budget) total += cost(words[++hi]);
  while (lo > 0 && total + cost(words[lo - 1]) <= budget) total += cost(words[--lo]);
  return { text: words.slice(lo, hi + 1).join(" "), start: lo > 0, end: hi < words.length - 1 };
}

/** The first `n` UTF-16 units, never ending inside a surrogate pair. */
const codePoints = (s: string, n: number) => s.slice(0, /[\uD800-\uDBFF]/.test(s[n - 1] ?? "") ? n - 1 : n);
