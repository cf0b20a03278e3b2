// Whom a memory is about. Memories about people in the user's life open with a name ("Anna moved to Porto", "Tim is
// reading Dune"); a question that names someone ("What books has John read?") is about them, and a memory about
// someone else matches it by coincidence of words, however many it shares. Attribution (./attribution.ts) never
// credits such a memory; recall (./recall.ts) ranks it lower.
import { indexWords } from "@/lib/crypto/content";

/**
 * Whom each memory is about, when it opens with a name (a word some text writes with a capital inside it:
 * "Caroline attended…"), as the index stems it; null for one that opens otherwise ("Has a dog", "User prefers…").
 */
export function subjectsOf(texts: string[], question: string): Array<string | null> {
  const names = new Set<string>();
  const stem = stemmingOnce();
  for (const text of [question, ...texts]) for (const w of namedWords(text, stem)) if (!/\d/.test(w)) names.add(w);
  const opening = texts.map((text) => {
    const first = text.match(/^\s*(\p{Lu}[\p{L}'’-]*)/u)?.[1];
    const stem1 = first ? stem(first)[0] : undefined;
    return stem1 && names.has(stem1) ? stem1 : null;
  });
  // Someone several memories are about; a name opening one memory alone may be a place ("Porto is where…").
  const opens = new Map<string, number>();
  for (const s of opening) if (s) opens.set(s, (opens.get(s) ?? 0) + 1);
  return opening.map((s) => (s && opens.get(s)! >= 2 ? s : null));
}

/**
 * The memories about someone the question does not ask about: it names people, and the memory opens with another
 * name and holds none of the asked ones ("What do Melanie's family give her?" is not answered by "Caroline's friends,
 * family, and mentors are her rocks…", however many words they share).
 */
export function aboutSomeoneElse(
  askedNames: string[],
  subjects: Array<string | null>,
  holds: (i: number, name: string) => boolean,
) {
  const out = new Set<number>();
  if (!askedNames.length) return out;
  subjects.forEach((s, i) => {
    if (s === null || askedNames.some((n) => sameName(n, s)) || askedNames.some((n) => holds(i, n))) return;
    out.add(i);
  });
  return out;
}

/** More names than a question about a few people holds ("What did Anna and Tim…"): a pasted list or document. */
const MAX_ASKED_NAMES = 12;

/**
 * The names a question asks about, stemmed as the index stems them; none past MAX_ASKED_NAMES, as a text naming that
 * many people is about none of them in particular (and each memory is checked against every asked name).
 */
export function askedNamesOf(question: string): string[] {
  const names = [...namedWords(question)].filter((w) => !/\d/.test(w));
  return names.length > MAX_ASKED_NAMES ? [] : names;
}

/** Of these memory texts, the indices of those about someone the question does not ask about (see aboutSomeoneElse). */
export function aboutOthers(question: string, texts: string[]): Set<number> {
  const asked = askedNamesOf(question);
  if (!asked.length) return new Set();
  // Only a memory holding the start of an asked name is stemmed whole (a stem is its word's start but for its last
  // letter: "emili" for "Emily").
  const words = new Map<number, Set<string>>();
  const holds = (i: number, n: string) => {
    if (!texts[i].toLowerCase().includes(n.slice(0, -1))) return false;
    if (!words.has(i)) words.set(i, new Set(indexWords(texts[i])));
    return words.get(i)!.has(n);
  };
  return aboutSomeoneElse(asked, subjectsOf(texts, question), holds);
}

/** One name, or one a short form of the other ("Mel" and "Melanie"). */
const sameName = (a: string, b: string) =>
  a === b || (Math.min(a.length, b.length) >= 3 && (a.startsWith(b) || b.startsWith(a)));

/** Words that name something (a capital inside the text, or digits), stemmed as the index stems them. */
export function namedWords(text: string, stem: (token: string) => string[] = indexWords): Set<string> {
  const names = new Set<string>();
  let first = true;
  for (const m of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)) {
    const t = m[0];
    if (/\d/.test(t) || (!first && /^\p{Lu}/u.test(t) && !afterSentenceEnd(text, m.index))) {
      for (const w of stem(t)) names.add(w);
    }
    first = false;
  }
  return names;
}

/** Whether the text before `at` ends a sentence (".", "!" or "?", then blanks only). */
function afterSentenceEnd(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && /\s/.test(text[i])) i--;
  return i >= 0 && ".!?".includes(text[i]);
}

/** indexWords, each token stemmed once (names repeat across a hundred memories). */
function stemmingOnce(): (token: string) => string[] {
  const seen = new Map<string, string[]>();
  return (token) => {
    let out = seen.get(token);
    if (!out) seen.set(token, (out = indexWords(token)));
    return out;
  };
}
