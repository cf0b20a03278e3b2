// A long text in parts of at most `max` characters, each ending where the text pauses: a blank line, else a line
// break, else a space, if one falls in the part's second half; else a plain cut (never inside a character).
// Joined again, the parts are the text: nothing is dropped.
export function splitIntoParts(text: string, max: number): string[] {
  const parts: string[] = [];
  let at = 0;
  while (text.length - at > max) {
    const window = text.slice(at, at + max);
    let end = breakIn(window, max);
    if (/[\uD800-\uDBFF]/.test(text[at + end - 1])) end--; // not half of a surrogate pair
    parts.push(text.slice(at, at + end));
    at += end;
  }
  parts.push(text.slice(at));
  return parts;
}

/** Where in `window` (a full part) to end it: just after the last pause in its second half, else its end. */
function breakIn(window: string, max: number): number {
  for (const pause of ["\n\n", "\n", " "]) {
    const i = window.lastIndexOf(pause);
    if (i >= max / 2) return i + pause.length;
  }
  return max;
}
