// One call to the memory model that must answer with JSON of a known shape: JSON mode asked for, the object taken
// from whatever wraps it (lib/llm/model-reply.ts), checked with zod. Malformed or cut-off output is null (the caller
// changes nothing); endpoint errors throw (the job retries).
import { z } from "zod";
import type { ModelConnection } from "./connection";
import { openaiClient } from "./client";
import { jsonFromReply } from "./model-reply";
import { metered, type Meter } from "./metered";
import { withoutRefused } from "./server-quirks";
import { callWithinLimit, cutToTokens, isTooLong, promptTokens } from "./prompt-limits";
import { MESSAGE_OVERHEAD } from "@/lib/memory/tokens";
import type OpenAI from "openai";

export async function askMemoryModelJson<S extends z.ZodType>(
  conn: ModelConnection,
  system: string,
  user: string,
  schema: S,
  meter: Meter,
): Promise<z.infer<S> | null> {
  let input = user;
  for (let attempt = 0; ; attempt++) {
    const messages = [
      { role: "system" as const, content: system },
      { role: "user" as const, content: input },
    ];
    // A server that refuses JSON mode (LM Studio) is asked without it: the prompts ask for JSON anyway.
    const res = await callWithinLimit(conn, conn.memoryModel, messages, () =>
      withoutRefused(conn, conn.memoryModel, ["jsonMode"], (use) =>
        metered(meter, "model", () =>
          openaiClient(conn, { maxRetries: 1 }).chat.completions.create({
            model: conn.memoryModel,
            ...(use.has("jsonMode") ? { response_format: { type: "json_object" as const } } : {}),
            messages,
          }),
        ),
      ),
    );
    if (!isTooLong(res)) return parsedReply(res, schema);
    // Longer than the server reads: the input is cut to fit (its start and end kept), at most twice.
    const room = res.tooLong - promptTokens([{ content: system }]) - MESSAGE_OVERHEAD;
    if (attempt >= 2 || room < MIN_INPUT_TOKENS) return null;
    input = cutToTokens(input, room);
  }
}

/** Below this much room for its input, a memory-model call is not made: it would see too little to decide. */
const MIN_INPUT_TOKENS = 200;

function parsedReply<S extends z.ZodType>(res: OpenAI.Chat.Completions.ChatCompletion, schema: S): z.infer<S> | null {
  const choice = res.choices[0];
  // Cut off by the token limit: whatever came is incomplete.
  if (!choice || choice.finish_reason === "length") return null;
  const parsed = schema.safeParse(jsonFromReply(choice.message?.content ?? ""));
  return parsed.success ? parsed.data : null;
}

/**
 * A list in a model's reply, each item checked on its own: one the model got wrong is dropped, not the whole reply
 * (small local models slip on one item of many).
 */
export function validItems<S extends z.ZodType>(item: S, max: number) {
  return z
    .array(z.unknown())
    .max(max)
    .transform((items) =>
      items.flatMap((i) => {
        const r = item.safeParse(i);
        return r.success ? [r.data as z.output<S>] : [];
      }),
    );
}

/** An enum a model may write in any case ("Same", "PREFERENCE"). */
export function anyCase<const T extends readonly [string, ...string[]]>(values: T) {
  return z.preprocess((v) => (typeof v === "string" ? v.trim().toLowerCase() : v), z.enum(values));
}
