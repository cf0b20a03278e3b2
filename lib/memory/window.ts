// Which history items go to the model: the newest whole turns that fit the
// token budget. A turn is a user message and everything answering it (assistant
// text, tool calls and their results), so trimming never separates a question
// from its answer or a tool call from its result. The newest turn is always
// kept, even alone over budget (the message length limit bounds it).
import type { SessionItem } from "./session";

export type WindowItem = Pick<
  SessionItem,
  "id" | "role" | "tokens" | "status" | "content" | "toolCalls" | "toolCallId"
>;

export type Window<T extends WindowItem> = {
  kept: T[];
  /** Items that fell out of the window (oldest first): candidates for the summary. */
  dropped: T[];
  tokens: number;
};

/** Items the model should see at all: failed answers with nothing in them are noise. */
export function promptable<T extends WindowItem>(items: T[]): T[] {
  return items.filter(
    (i) => !(i.status === "failed" && !i.content && !i.toolCalls?.length) && i.status !== "streaming",
  );
}

export function groupTurns<T extends WindowItem>(items: T[]): T[][] {
  const turns: T[][] = [];
  for (const it of items) {
    if (it.role === "user" || it.role === "system" || turns.length === 0) turns.push([it]);
    else turns[turns.length - 1].push(it);
  }
  return turns;
}

export function selectWindow<T extends WindowItem>(items: T[], budget: number): Window<T> {
  const turns = groupTurns(items);
  const keptTurns: T[][] = [];
  let tokens = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const cost = turns[i].reduce((s, it) => s + it.tokens, 0);
    if (keptTurns.length > 0 && tokens + cost > budget) break;
    keptTurns.unshift(turns[i]);
    tokens += cost;
  }
  const kept = keptTurns.flat();
  return { kept, dropped: items.slice(0, items.length - kept.length), tokens };
}
