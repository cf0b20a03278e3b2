// One call to the memory model that must answer with JSON of a known shape: JSON mode asked for, the object taken
// from whatever wraps it (lib/llm/model-reply.ts), checked with zod. Malformed or cut-off output is null (the caller
// changes nothing); endpoint errors throw (the job retries).
import { z } from "zod";
import type { ModelConnection } from "./connection";
import { openaiClient } from "./client";
import { jsonFromReply } from "./model-reply";
import { metered, type Meter } from "./metered";
import { withoutRefused } from "./server-quirks";

export async function askMemoryModelJson<S extends z.ZodType>(
  conn: ModelConnection,
  system: string,
  user: string,
  schema: S,
  meter: Meter,
): Promise<z.infer<S> | null> {
  // A server that refuses JSON mode (LM Studio) is asked without it: the prompts ask for JSON anyway.
  const res = await withoutRefused(conn, conn.memoryModel, ["jsonMode"], (use) =>
    metered(meter, "model", () =>
      openaiClient(conn, { maxRetries: 1 }).chat.completions.create({
        model: conn.memoryModel,
        ...(use.has("jsonMode") ? { response_format: { type: "json_object" as const } } : {}),
        messages: [
          { role: "system", content: system },
          { role: "user", content: user },
        ],
      }),
    ),
  );
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
