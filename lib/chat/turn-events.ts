// The events of one streamed turn: what runTurn yields, what the chat route
// writes (one JSON object a line) and what the chat view reads. One type for
// both sides; the browser receives the answer in its JSON form (dates as text).
import type { SessionItem } from "@/lib/memory/session";

export type MemoryUsed = { id: string; text: string };

/** A value as JSON.stringify writes it: dates become strings. */
export type Json<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] };

/** `I`: the answer as each side holds it (SessionItem on the server, Json<SessionItem> in the browser). */
export type TurnEvent<I = SessionItem> =
  | {
      type: "start";
      threadId: string;
      userItemId: string;
      assistantItemId: string;
      model: string;
      /** Why another model than the one picked answers (it was taken off the list). */
      modelNote: string | null;
    }
  | { type: "delta"; text: string }
  | { type: "tool"; name: string; result: string; assistantItemId: string }
  /** memoriesUsed: the memories the answer drew on; alsoGiven: the rest of those the model was given. */
  | { type: "done"; item: I; memoriesUsed: MemoryUsed[]; alsoGiven: MemoryUsed[] }
  | { type: "error"; message: string; item: I | null };

/** The events as the browser parses them. */
export type WireTurnEvent = TurnEvent<Json<SessionItem>>;
