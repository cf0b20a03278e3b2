// How the model may cite a memory it relied on: "[memory: a few of its words]".
// The memory block asks for it (lib/memory/recall.ts), attribution reads it
// (lib/memory/attribution.ts), and answers are saved and shown without it.
// No imports: the browser strips citations from an answer while it streams.
// The spaces before a citation go with it, but are found by walking back from each match: a pattern that begins
// with them ([ \t]*\[memory…) is tried at every space of a long run, quadratic in it (100,000 spaces in an answer held
// the server for 3.5 seconds).
const CITATION = /\[memory:\s*([^\]\n]{1,200})\]/gi;
/** A citation still being written at the end of a streaming answer, from its "[" on. */
const OPEN_CITATION = /^\[(?:m(?:e(?:m(?:o(?:r(?:y(?::[^\]\n]*)?)?)?)?)?)?)?$/i;

export const CITATION_REQUEST =
  "When your answer relies on one of the memories below, you may cite it right after, as [memory: its first few words]; the citation is removed before the user reads the answer.";

/** The answer as the user reads it; `streaming`: also hides a citation not finished yet. */
export function stripCitations(text: string, streaming = false): string {
  let out = "";
  let last = 0;
  for (const m of text.matchAll(CITATION)) {
    out += trimBlanksEnd(text.slice(last, m.index));
    last = m.index + m[0].length;
  }
  out += text.slice(last);
  if (!streaming) return out;
  // The unfinished citation starts at the last "[" (or, when its words hold a "[", at the last "[memory:").
  for (const open of [out.lastIndexOf("["), out.toLowerCase().lastIndexOf("[memory:")])
    if (open >= 0 && OPEN_CITATION.test(out.slice(open))) return trimBlanksEnd(out.slice(0, open));
  return out;
}

/** Without the spaces and tabs at its end (walked back: a pattern anchored at the end is tried at each of them). */
function trimBlanksEnd(s: string): string {
  let i = s.length;
  while (i > 0 && (s[i - 1] === " " || s[i - 1] === "\t")) i--;
  return s.slice(0, i);
}

/** The words of each citation in the answer. */
export function citations(text: string): string[] {
  return [...text.matchAll(CITATION)].map((m) => m[1].trim());
}
