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
  for (const text of [question, ...texts]) for (const w of namedWords(text)) if (!/\d/.test(w)) names.add(w);
  const opening = texts.map((text) => {
    const first = text.match(/^\s*(\p{Lu}[\p{L}'’-]*)/u)?.[1];
    const stem = first ? indexWords(first)[0] : undefined;
    return stem && names.has(stem) ? stem : null;
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

/** The names a question asks about, stemmed as the index stems them. */
export const askedNamesOf = (question: string) => [...namedWords(question)].filter((w) => !/\d/.test(w));

/** Of these memory texts, the indices of those about someone the question does not ask about (see aboutSomeoneElse). */
export function aboutOthers(question: string, texts: string[]): Set<number> {
  const asked = askedNamesOf(question);
  if (!asked.length) return new Set();
  // Only a memory opening with another name is stemmed whole, to see whether it names an asked one too.
  const words = new Map<number, Set<string>>();
  const holds = (i: number, n: string) => {
    if (!words.has(i)) words.set(i, new Set(indexWords(texts[i])));
    return words.get(i)!.has(n);
  };
  return aboutSomeoneElse(asked, subjectsOf(texts, question), holds);
}

/** One name, or one a short form of the other ("Mel" and "Melanie"). */
const sameName = (a: string, b: string) =>
  a === b || (Math.min(a.length, b.length) >= 3 && (a.startsWith(b) || b.startsWith(a)));

/** Words that name something (a capital inside the text, or digits), stemmed as the index stems them. */
export function namedWords(text: string): Set<string> {
  const names = new Set<string>();
  const tokens = text.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
  tokens.forEach((t, i) => {
    const capitalInside = i > 0 && /^\p{Lu}/u.test(t) && !/[.!?]\s*$/.test(text.slice(0, text.indexOf(t)));
    if (capitalInside || /\d/.test(t)) for (const w of indexWords(t)) names.add(w);
  });
  return names;
}
