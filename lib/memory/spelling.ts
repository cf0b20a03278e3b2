// A question's misspelled words, and the words they were likely meant to be: "funraiser" for "fundraiser",
// "recieved" for "received", "roadtrip" for "road trip". The index holds the words as they were written, so a typo
// in the question matched nothing, in recall and in the search of past chats (#55). The corrections join the word as
// alternatives (after its forms, lib/memory/word-forms.ts `MEANT`): the word as typed still matches, and rows that hold
// the intended word do too, unless a model wrote the word as typed in one of the user's answers or documents (SQL
// `mnemo_model_wrote`): then it is a word the dictionary lacks ("venmo", "iphone"), not a typo.
// The dictionary is Hunspell's English one (`dictionary-en`, read by `nspell`); a word it does not know is corrected
// only to what one edit away it does know (a letter left out, added, swapped with the next or changed), and only
// when that is one or two words, never a guess among many ("tilly" is ten words away by one letter: a name, left as
// it is). A word written with a capital is taken for a name, and a text whose words the dictionary mostly does not
// know is taken for another language, and neither is corrected.
import type NSpell from "nspell";

/** Shorter words are too often abbreviations, and too close to too many words; longer ones are not words. */
const MIN_LENGTH = 4;
const MAX_LENGTH = 24;
/** Words corrected in one text, at most: each costs up to a millisecond the first time. */
const MAX_CORRECTED = 4;
/** More likely corrections than this: a guess, not a correction. */
const MAX_CORRECTIONS = 2;
/** The shortest half of a word split in two ("roadtrip": "road trip"). */
const MIN_PART = 3;
/** Past this share of unknown words a text is taken for another language (or a code, or a list of names). */
const MAX_UNKNOWN_SHARE = 0.5;
/** Corrections kept (each a short list), so a word asked about again costs nothing. */
const CACHE_SIZE = 2000;
const LETTERS = "abcdefghijklmnopqrstuvwxyz";

let loading: Promise<NSpell | null> | null = null;
let speller: NSpell | null = null;

/**
 * The dictionary, read once per process (about a quarter of a second; the server reads it at start). Null when it
 * cannot be read: words then go uncorrected, and search and recall go on as before.
 */
export function loadSpeller(): Promise<NSpell | null> {
  loading ??= Promise.all([import("nspell"), import("dictionary-en")])
    .then(([{ default: nspell }, { default: dictionary }]) => {
      speller = nspell({ aff: Buffer.from(dictionary.aff), dic: Buffer.from(dictionary.dic) });
      return speller;
    })
    .catch((e) => {
      console.error(`[mnemo] spelling dictionary: ${(e as Error).message}; misspelled words go uncorrected`);
      return null;
    });
  return loading;
}

const cache = new Map<string, string[]>();

/** The words one edit away from `w` that the dictionary knows, and `w` split in two known words. */
function correctionsOf(spell: NSpell, w: string): string[] {
  const cached = cache.get(w);
  if (cached) return cached;
  const found = new Set<string>();
  const known = (c: string) => c !== w && spell.correct(c) && found.add(c);
  for (let i = 0; i < w.length - 1; i++) known(w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2));
  for (let i = 0; i < w.length; i++) known(w.slice(0, i) + w.slice(i + 1));
  for (let i = 0; i <= w.length; i++) for (const c of LETTERS) known(w.slice(0, i) + c + w.slice(i));
  for (let i = 0; i < w.length; i++) for (const c of LETTERS) if (c !== w[i]) known(w.slice(0, i) + c + w.slice(i + 1));
  // Two words run together ("icecream"): only when no single word is one edit away.
  if (!found.size)
    for (let i = MIN_PART; i <= w.length - MIN_PART; i++)
      if (spell.correct(w.slice(0, i)) && spell.correct(w.slice(i))) found.add(`${w.slice(0, i)} ${w.slice(i)}`);
  const out = found.size <= MAX_CORRECTIONS ? [...found] : [];
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(w, out);
  return out;
}

/**
 * The likely corrections of the misspelled words among `terms` (the words a search will look for, in lower case, as
 * queryTerms gives them), at most MAX_CORRECTED of them; `text` (what they were taken from) tells which were written
 * with a capital. Empty for a text spelled right, for one of another language, and when the dictionary cannot be read
 * (the first call waits for it to be read).
 */
export async function respellings(text: string, terms: string[]): Promise<Map<string, string[]>> {
  const spell = speller ?? (await loadSpeller());
  const out = new Map<string, string[]>();
  if (!spell) return out;
  const words = [...new Set(terms)].filter(
    (w) => w.length >= MIN_LENGTH && w.length <= MAX_LENGTH && /^[a-z]+$/.test(w),
  );
  // Spelled right (most questions): the text itself need not be read.
  if (words.every((w) => spell.correct(w))) return out;
  const norm = text.normalize("NFKC");
  // A word written with a capital is a name: neither corrected nor counted as a sign of another language.
  const capitalized = new Set((norm.match(/\p{Lu}[\p{L}]*/gu) ?? []).map((w) => w.toLowerCase()));
  // Nor is a piece of a word with an apostrophe ("wouldn" of "wouldn't", which search splits): it is no typo.
  const pieces = new Set((norm.match(/\p{L}+['’]\p{L}*/gu) ?? []).flatMap((w) => w.toLowerCase().split(/['’]/)));
  const checked = words.filter((w) => !capitalized.has(w) && !pieces.has(w));
  const unknown = checked.filter((w) => !spell.correct(w));
  // One or two words say too little about the language to judge it.
  if (!unknown.length || (checked.length >= 3 && unknown.length > MAX_UNKNOWN_SHARE * checked.length)) return out;
  for (const w of unknown.slice(0, MAX_CORRECTED)) {
    const found = correctionsOf(spell, w);
    if (found.length) out.set(w, found);
  }
  return out;
}
