// One model call of a turn as its chunks arrive: the text so far, the tool calls pieced together from their
// fragments, and the usage the server reports (lib/chat/turn.ts).
import type OpenAI from "openai";

export type ToolCallDraft = { id: string; name: string; arguments: string };
export type Round = { text: string; calls: Map<number, ToolCallDraft> };
export type Usage = { prompt: number; completion: number; any: boolean };

/** Reads one chunk into the round and the usage; returns its text delta. */
export function takeChunk(
  chunk: OpenAI.Chat.Completions.ChatCompletionChunk,
  r: Round,
  usage: Usage,
): string | undefined {
  const choice = chunk.choices[0];
  if (chunk.usage) {
    usage.prompt += chunk.usage.prompt_tokens;
    usage.completion += chunk.usage.completion_tokens;
    usage.any = true;
  }
  for (const tc of choice?.delta?.tool_calls ?? []) {
    const call = r.calls.get(tc.index) ?? { id: "", name: "", arguments: "" };
    if (tc.id) call.id = tc.id;
    if (tc.function?.name) call.name += tc.function.name;
    if (tc.function?.arguments) call.arguments += tc.function.arguments;
    r.calls.set(tc.index, call);
  }
  return choice?.delta?.content ?? undefined;
}
