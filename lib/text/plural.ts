// Counts in words: "1 message", "2 messages", "1,204 memories". English plural forms through Intl.PluralRules,
// numbers grouped the same way everywhere (server and browser alike, so a page never hydrates differently).
const rules = new Intl.PluralRules("en-US");
const numbers = new Intl.NumberFormat("en-US");

export const formatCount = (n: number) => numbers.format(n);

/** The count and the noun in the form English uses for it: count(1, "message") is "1 message". */
export function count(n: number, one: string, other = `${one}s`): string {
  return `${numbers.format(n)} ${rules.select(n) === "one" ? one : other}`;
}
