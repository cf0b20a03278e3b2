// What a model answered, and the JSON object in it. Any OpenAI-compatible model may wrap its answer: a reasoning
// model's <think> block first; around JSON, a code fence, a sentence before or after, a trailing comma or single
// quotes from a small local model. A reply cut off before its object closes (the model ran out of tokens) gives
// nothing: a repaired half would carry a half-written memory.
import { jsonrepair } from "jsonrepair";

// A reasoning model's thinking, when the server leaves it in the reply's text (vLLM without a reasoning parser,
// older Ollama): a closed block, or one the token limit cut off (then nothing after it is the answer).
const REASONING = /<(think|thinking|reasoning)>[\s\S]*?(?:<\/\1>|$)/gi;

/** A model's reply without its thinking: what it answered. */
export function withoutReasoning(text: string): string {
  return text.replace(REASONING, "").trim();
}

/** The first complete JSON object in `text`, parsed (repaired when it is nearly JSON), or undefined. */
export function jsonFromReply(text: string): unknown {
  const body = withoutReasoning(text);
  const object = firstObject(body);
  if (object === null) return undefined;
  try {
    return JSON.parse(object);
  } catch {
    try {
      return JSON.parse(jsonrepair(object));
    } catch {
      return undefined;
    }
  }
}

/** The text of the first balanced {…} (braces inside strings not counted), or null when none closes. */
function firstObject(text: string): string | null {
  const start = text.indexOf("{");
  if (start < 0) return null;
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}
