// One text policy for everything that enters Mnemo (messages, memories, titles,
// names, imports, filters): NUL characters are removed (PostgreSQL cannot store
// them in text), lone UTF-16 surrogates become U+FFFD (they cannot be encoded
// as UTF-8), and every truncation cuts between grapheme clusters, never inside
// an emoji or a letter with its accents.

// A lone high surrogate (not followed by a low one) or a lone low surrogate.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const CONTROL_NUL = /\u0000/g;

/** Text safe to store and to show: no NUL, no lone surrogates. */
export function cleanText(s: string): string {
  if (!needsCleaning(s)) return s;
  return s.replace(CONTROL_NUL, "").replace(LONE_SURROGATE, "\uFFFD");
}

export function needsCleaning(s: string): boolean {
  // Fast path: a plain scan is cheaper than two regular expressions on long text.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0 || (c >= 0xd800 && c <= 0xdfff)) {
      if (c === 0) return true;
      if (c <= 0xdbff) {
        const n = s.charCodeAt(i + 1);
        if (n >= 0xdc00 && n <= 0xdfff) {
          i++;
          continue;
        }
      }
      return true;
    }
  }
  return false;
}

/**
 * Cleans every string inside a JSON-like value (request bodies, server action
 * arguments, import files), keys included. Other values pass through.
 */
export function cleanDeep<T>(value: T, depth = 0): T {
  if (typeof value === "string") return cleanText(value) as T;
  if (depth > 64 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => cleanDeep(v, depth + 1)) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value; // Dates, Buffers, FormData…
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[cleanText(k)] = cleanDeep(v, depth + 1);
  return out as T;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Enough of what follows the cut for the cluster at the cut to be read whole (a code point is at most 2 units). */
const AFTER_CUT = 64;

/**
 * The longest prefix of whole grapheme clusters within `max` UTF-16 units: it ends where the cluster holding unit
 * `max` begins. Asked of the segmenter directly (`containing`), not by walking every cluster before the cut, and of
 * the text only up to just past the cut: walking a pasted document to a cut a million units in took 250 ms of a
 * blocked server, and segmenting a 7 MB text at all took tens of milliseconds. A cluster's start depends only on
 * what precedes it and its own first code point.
 */
export function cutGraphemes(s: string, max: number): string {
  if (s.length <= max) return s;
  return s.slice(0, segmenter.segment(s.slice(0, max + AFTER_CUT)).containing(max)!.index);
}

/** Shortens text to at most `max` UTF-16 units, ending with "…" when cut. */
export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  return `${cutGraphemes(s, Math.max(0, max - 1)).trimEnd()}…`;
}
