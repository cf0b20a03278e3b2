// How much of one message Mnemo keeps. A message can be a pasted document: an imported chat or an API client's
// message is stored whole up to this many characters (the thread shows its start, the whole on request:
// components/chat/long-text.tsx), and the rest is cut with a note saying so. Messages typed in the chat have their
// own, smaller limit (MNEMO_MAX_MESSAGE_CHARS).
import { cutGraphemes } from "@/lib/text/policy";

export const MAX_STORED_MESSAGE_CHARS = 1_000_000;

/**
 * An imported conversation keeps its messages whole while together they stay under this; past it, each longer
 * message keeps its first SHORT_STORED_MESSAGE_CHARS. One conversation is written in one transaction, and the
 * embedded database keeps the memory a transaction took: a conversation of 60 messages of a million characters took
 * the process to 2.5 GB whole, 1.6 GB with this budget (1.3 GB with every message cut at 100,000).
 */
export const MAX_STORED_CONVERSATION_CHARS = 10_000_000;
export const SHORT_STORED_MESSAGE_CHARS = 100_000;

/** The text as stored: whole, or its first `max` characters and a note of the cut. */
export function storedMessageText(
  text: string,
  when: "on import" | "when stored",
  max = MAX_STORED_MESSAGE_CHARS,
): string {
  if (text.length <= max) return text;
  return `${cutGraphemes(text, max)}\n\n[cut at ${max.toLocaleString("en-US")} characters ${when}]`;
}
