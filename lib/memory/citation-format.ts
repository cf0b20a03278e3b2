// How the model may cite a memory it relied on: "[memory: a few of its words]".
// The memory block asks for it (lib/memory/recall.ts), attribution reads it
// (lib/memory/attribution.ts), and answers are saved and shown without it.
// No imports: the browser strips citations from an answer while it streams.
const CITATION = /[ \t]*\[memory:\s*([^\]\n]{1,200})\]/gi;
/** A citation still being written at the end of a streaming answer. */
const OPEN_CITATION = /[ \t]*\[(?:m(?:e(?:m(?:o(?:r(?:y(?::[^\]\n]*)?)?)?)?)?)?)?$/i;

export const CITATION_REQUEST =
  "When your answer relies on one of the memories below, you may cite it right after, as [memory: its first few words]; the citation is removed before the user reads the answer.";

/** The answer as the user reads it; `streaming`: also hides a citation not finished yet. */
export function stripCitations(text: string, streaming = false): string {
  const out = text.replace(CITATION, "");
  return streaming ? out.replace(OPEN_CITATION, "") : out;
}

/** The words of each citation in the answer. */
export function citations(text: string): string[] {
  return [...text.matchAll(CITATION)].map((m) => m[1].trim());
}
