// Token counting with a real tokenizer (o200k_base, the GPT-4o family's), used
// for budgets. Other models tokenize differently; budgets keep a safety margin.
import { countTokens as count } from "gpt-tokenizer/encoding/o200k_base";

/** Per-message overhead the chat format adds (role, separators). */
export const MESSAGE_OVERHEAD = 4;

export function countTokens(text: string): number {
  return text ? count(text) : 0;
}

export function messageTokens(content: string, extra = ""): number {
  return countTokens(content) + (extra ? countTokens(extra) : 0) + MESSAGE_OVERHEAD;
}
