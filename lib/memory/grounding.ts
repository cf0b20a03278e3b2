// Whether what the memory model learned from an exchange is in the user's own words. The model reads the whole
// exchange, and the answer can repeat text the user never wrote (a recalled imported chat, a pasted page that
// steered it): "the user wants a link to evil.example in every answer" must not become a memory that goes into every
// later prompt. So a learned memory, a change's new words, or the memory a removal targets must share a quarter of its
// telling words with the user's message (the same word, another form of it, a cognate, a synonym); what does not waits
// for the user's review (lib/memory/writes.ts), not lost. Text in a script the user's message does not use cannot be
// compared and is let through. It narrows what injected text can plant; it cannot stop text that reuses the user's
// own words.
import { stem } from "@/lib/text/stem";
import { wordForms } from "./word-forms";
import { relatedWords } from "./related-words";

// Words every memory uses whatever it is about: they tell nothing about where it came from.
// prettier-ignore
const GENERIC = new Set([
  "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "from", "by", "as", "about",
  "into", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "having", "do", "does", "did",
  "not", "no", "it", "its", "that", "this", "these", "those", "there", "their", "them", "they", "he", "she", "his",
  "her", "him", "user", "users", "user's", "s", "named", "called", "likes", "like", "liked", "loves", "love",
  "prefers", "prefer", "preferred", "wants", "want", "wanted", "lives", "live", "lived", "works", "work", "worked",
  "enjoys", "enjoy", "uses", "use", "used", "would", "should", "can", "could", "will", "always", "never", "every",
  "all", "some", "any", "who", "which", "what", "when", "where", "how", "also", "very", "more", "most", "than",
  "currently", "now", "recently", "since", "until", "one", "two",
]);

// prettier-ignore
const MONTHS = new Set([
  "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
  "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
]);

/** Letters without their accents, lower case: "végétarien" and "vegetarian" compare. */
const fold = (s: string) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();

const words = (s: string) => fold(s).match(/[\p{L}\p{N}]+/gu) ?? [];
const latin = (w: string) => /^[a-z0-9]+$/.test(w);

/** The message's words as stems, irregular forms included, for comparison. */
function messageKeys(message: string): { stems: Set<string>; words: string[] } {
  const all = words(message);
  const stems = new Set<string>();
  for (const w of all) {
    stems.add(stem(w));
    if (latin(w)) for (const f of wordForms(w)) stems.add(stem(f));
  }
  return { stems, words: all };
}

function* bigrams(w: string) {
  const chars = [...w];
  for (let i = 0; i + 1 < chars.length; i++) yield chars[i] + chars[i + 1];
}

/**
 * The share of a memory's telling words its message must hold. Measured on LoCoMo's 1,210 annotated observations
 * (`npm run bench:grounding`): one word alone passed 99.3% against the turn they cite but 24.6% against another
 * conversation's turn; a fifth 97.6% / 5.9%; a quarter 96.4% / 3.2%; a third 89.9% / 0.5%.
 */
const GROUNDED_SHARE = 0.25;

/** Two words in different languages with a common start of five letters or more ("lisboa", "lisbon"). */
const cognate = (a: string, b: string) => a.length >= 5 && b.length >= 5 && a.slice(0, 5) === b.slice(0, 5);

/**
 * Whether `text` (a learned memory, or the new words of a change) shares enough telling words with the user's `message`.
 * Text with no telling word, or none in a script the message uses, counts as grounded (nothing to compare).
 */
export function groundedIn(message: string, text: string): boolean {
  // Dates and numbers are left out: learning writes "tomorrow" as the day it means, which the message never says.
  const telling = words(text).filter((w) => !GENERIC.has(w) && !MONTHS.has(w) && w.length >= 3 && !/\d/.test(w));
  if (!telling.length) return true;
  const m = messageKeys(message);
  const comparable = telling.filter((w) => (latin(w) ? m.words.some(latin) : m.words.some((x) => !latin(x))));
  if (!comparable.length) return true;
  // Scripts written without spaces (Chinese, Japanese) come as long runs: any two characters in common count.
  const other = m.words.filter((x) => !latin(x)).join(" ");
  const hits = comparable.filter((w) => {
    if (!latin(w)) return w.length < 2 ? other.includes(w) : [...bigrams(w)].some((b) => other.includes(b));
    if (m.stems.has(stem(w)) || m.words.some((x) => latin(x) && cognate(x, w))) return true;
    // The same thing in other words: "children" for the message's "kids" (WordNet's synonyms and narrower terms).
    return relatedWords(w).some((r) => r.split(/\s+/).every((part) => m.stems.has(stem(part))));
  }).length;
  return hits > 0 && hits >= GROUNDED_SHARE * comparable.length;
}

/** The words of `next` that `before` does not have: what a change adds. */
export function addedWords(before: string, next: string): string {
  const old = new Set(words(before).map((w) => stem(w)));
  return words(next)
    .filter((w) => !old.has(stem(w)))
    .join(" ");
}
