// Porter's stemmer (the `stemmer` package), with the stems it gave kept: recall, attribution and the index stem the
// same few thousand words of a user's history again and again, and each stem costs the stemmer's regular expressions
// about a microsecond: recall at 2,000 tokens went from 27.1 to 25.3 ms at the median (docs/benchmarks.md, stop 65).
import { LRUCache } from "lru-cache";
import { stemmer } from "stemmer";

/** Words whose stems are kept: far more than one person's vocabulary; under 10 MB with every word 40 letters long. */
const KEPT_WORDS = 50_000;
/** A word longer than this is stemmed each time: no vocabulary has it, and it would only push real words out. */
const LONGEST_KEPT = 40;

const stems = new LRUCache<string, string>({ max: KEPT_WORDS });

/** The word's stem, as `stemmer` gives it (lower-case words in, as the index writes them). */
export function stem(word: string): string {
  if (word.length > LONGEST_KEPT) return stemmer(word);
  let s = stems.get(word);
  if (s === undefined) stems.set(word, (s = stemmer(word)));
  return s;
}
