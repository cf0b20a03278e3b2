// What a model answered, and the JSON object in it. Any OpenAI-compatible model may wrap its answer: a reasoning
// model's <think> block first; around JSON, a code fence, a sentence before or after, a trailing comma or single
// quotes from a small local model. A reply cut off before its object closes (the model ran out of tokens) gives
// nothing: a repaired half would carry a half-written memory.
import { jsonrepair } from "jsonrepair";

// A reasoning model's thinking, when the server leaves it in the reply's text (vLLM without a reasoning parser,
// older Ollama): a block the reply opens with, closed or cut off by the token limit (then nothing after it is the
// answer). Only at the start: an answer may well mention "<think>" itself.
const REASONING = /^\s*<(think|thinking|reasoning)>[\s\S]*?(?:<\/\1>|$)/i;

/** A model's reply without the thinking it opened with: what it answered. */
export function withoutReasoning(text: string): string {
  return text.replace(REASONING, "").trim();
}

/**
 * The first complete JSON object in `text` (or array of objects), parsed (repaired when it is nearly JSON), or
 * undefined.
 */
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

/**
 * The text of the first balanced {…}, or […] of objects (brackets inside strings not counted), or null when none
 * closes. A "[" starts the value only when "{" or "]" follows it, so a footnote like "[1]" in prose does not.
 */
function firstObject(text: string): string | null {
  const brace = text.indexOf("{");
  const bracket = text.indexOf("[");
  const start =
    bracket >= 0 && (brace < 0 || bracket < brace) && /^\s*\[\s*[{\]]/.test(text.slice(bracket)) ? bracket : brace;
  if (start < 0) return null;
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "{" || ch === "[") depth++;
    else if ((ch === "}" || ch === "]") && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

const OPENERS = ["<think>", "<thinking>", "<reasoning>"];

/**
 * A streamed answer without the thinking block a reasoning model may open it with. Text is held back only while it
 * may still be that block (its start, or inside it); everything after the block's end, and any answer that does
 * not open with one, passes through as it comes. Thinking is not shown, stored, or sent back to the model.
 */
export class LeadingReasoningFilter {
  private state: "start" | "inside" | "after" | "answer" = "start";
  /** Whether the answer opened with a thinking block. */
  thought = false;
  private held = "";
  private close: RegExp | null = null;

  /** The part of this delta to show. */
  push(delta: string): string {
    if (this.state === "answer") return delta;
    this.held += delta;
    if (this.state === "start") {
      const head = this.held.trimStart();
      const open = /^<(think|thinking|reasoning)>/i.exec(head);
      if (!open) {
        const lower = head.toLowerCase();
        if (OPENERS.some((o) => o.startsWith(lower))) return ""; // empty, or an opening tag still arriving
        this.state = "answer";
        return this.release(this.held);
      }
      this.state = "inside";
      this.thought = true;
      this.close = new RegExp(`</${open[1]}>`, "i");
      this.held = head.slice(open[0].length);
    }
    if (this.state === "inside") {
      const end = this.close!.exec(this.held);
      // Only the tail can still hold a closing tag split across deltas.
      if (!end) return ((this.held = this.held.slice(-16)), "");
      this.state = "after";
      this.held = this.held.slice(end.index + end[0].length);
    }
    // After the block: the blank lines that separate it from the answer are not part of the answer.
    const rest = this.held.trimStart();
    if (!rest) return ((this.held = ""), "");
    this.state = "answer";
    return this.release(rest);
  }

  /** What is still held back when the stream ends: an answer too short to rule out a tag; nothing of thinking. */
  end(): string {
    return this.state === "start" ? this.release(this.held) : "";
  }

  private release(text: string): string {
    this.held = "";
    return text;
  }
}
