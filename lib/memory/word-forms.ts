// The forms of a question's words that stemming cannot join: irregular verbs and nouns ("meet" and "met", "buy" and
// "bought", "child" and "children"). The index stems words (PostgreSQL's English stemmer, or Porter's with
// encryption), which joins "visits" and "visited" but leaves "went" apart from "go", so "Where did she go?" missed
// "We went to Rome". They are the same word, so they search as one term at its full weight (unlike related words,
// lib/memory/related-words.ts, which are other words and count half).
// The source is WordNet's exception lists (verb.exc, noun.exc) as the `wink-lexicon` package ships them.
import verbExceptions from "wink-lexicon/src/wn-verb-exceptions.js";
import nounExceptions from "wink-lexicon/src/wn-noun-exceptions.js";
import { stem } from "@/lib/text/stem";
import { ALTERNATIVES } from "./related-words";

/** Separates a search term's other forms (the SQL function mnemo_term_query splits on it, as on ALTERNATIVES). */
export const FORMS = "\u001e";
/**
 * Puts a misspelled word's likely corrections of one word after its forms: alternatives too, unless a model wrote the
 * word as typed (mnemo_term_query asks mnemo_model_wrote), which makes it a word ("venmo" is not searched as "venom").
 */
export const MEANT = "\u001d";
/** At most this many other forms per word ("be" has six; a word with more is a list's quirk). */
const MAX_FORMS = 6;

/** Each lemma's irregular forms, built once from the exception lists. */
let formsOfLemma: Map<string, string[]> | null = null;
function lemmaForms(): Map<string, string[]> {
  if (formsOfLemma) return formsOfLemma;
  const out = new Map<string, string[]>();
  for (const list of [verbExceptions, nounExceptions])
    for (const [form, lemma] of Object.entries(list)) out.set(lemma, [...(out.get(lemma) ?? []), form]);
  return (formsOfLemma = out);
}
const lemmaOf = (list: Record<string, string>, w: string) => (Object.hasOwn(list, w) ? [list[w]] : []);

/** The word's other forms that stem differently from it (lower case), nearest first: its lemma, then the lemma's forms. */
export function wordForms(word: string): string[] {
  const w = word.toLowerCase();
  const stems = new Set([stem(w)]);
  const out: string[] = [];
  for (const lemma of new Set([...lemmaOf(verbExceptions, w), ...lemmaOf(nounExceptions, w), w]))
    for (const form of [lemma, ...(lemmaForms().get(lemma) ?? [])]) {
      const s = stem(form);
      if (stems.has(s) || !/^[a-z]+$/.test(form)) continue;
      stems.add(s);
      out.push(form);
    }
  return out.slice(0, MAX_FORMS);
}

/**
 * Search terms with each plain word's other forms joined to it (a term of related words is left as it is), and after
 * them a misspelled word's likely corrections (`respelled`, from lib/memory/spelling.ts), which stand for the same
 * word unless a model wrote it as typed (see MEANT).
 */
export function withWordForms(terms: string[], respelled?: Map<string, string[]>): string[] {
  return terms.map((t) => {
    if (t.includes(ALTERNATIVES) || t.includes(FORMS) || t.includes(MEANT)) return t;
    // A word split in two ("roadtrip": "road trip") is another way to write it, and matches only with both words:
    // a form. One word an edit away ("venom" for "venmo") may be another word: MEANT.
    const [split, meant] = partition(respelled?.get(t) ?? [], splitWord);
    const formed = [t, ...split, ...wordForms(t)].join(FORMS);
    return meant.length ? [formed, ...meant].join(MEANT) : formed;
  });
}

/** A correction that splits the word in two ("road trip"): always searched (see withWordForms). */
export const splitWord = (correction: string) => correction.includes(" ");

const partition = <T>(xs: T[], test: (x: T) => boolean): [T[], T[]] => [xs.filter(test), xs.filter((x) => !test(x))];
