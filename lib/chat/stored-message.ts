// How much of one message Mnemo keeps. A message can be a pasted document: an imported chat or an API client's
// message is stored whole up to this many characters (the thread shows its start, the whole on request:
// components/chat/long-text.tsx), and the rest is cut with a note saying so. Messages typed in the chat have their
// own, smaller limit (MNEMO_MAX_MESSAGE_CHARS).
import { cutGraphemes } from "@/lib/text/policy";

export const MAX_STORED_MESSAGE_CHARS = 1_000_000;

/** The text as stored: whole, or its first MAX_STORED_MESSAGE_CHARS characters and a note of the cut. */
export function storedMessageText(text: string, when: "on import" | "when stored"): string {
  if (text.length <= MAX_STORED_MESSAGE_CHARS) return text;
  const limit = MAX_STORED_MESSAGE_CHARS.toLocaleString("en-US");
  return `${cutGraphemes(text, MAX_STORED_MESSAGE_CHARS)}\n\n[cut at ${limit} characters ${when}]`;
}
