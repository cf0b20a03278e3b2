// One call to the memory model that must answer with JSON of a known shape: JSON mode asked for, the object taken
// from whatever wraps it (lib/llm/model-reply.ts), checked with zod. Malformed or cut-off output is null (the caller
// changes nothing); endpoint errors throw (the job retries).
import OpenAI from "openai";
import type { z } from "zod";
import type { ModelConnection } from "./connection";
import { openaiClient } from "./client";
import { jsonFromReply } from "./model-reply";
import { metered, type Meter } from "./metered";

/**
 * Servers known (in this process) to refuse JSON mode: LM Studio answers `response_format: json_object` with a 400
 * ("must be 'json_schema' or 'text'"), others reject the field. The prompts ask for JSON anyway, so those servers are
 * asked without it, after one refusal each.
 */
const noJsonMode = new Set<string>();

export async function askMemoryModelJson<S extends z.ZodType>(
  conn: ModelConnection,
  system: string,
  user: string,
  schema: S,
  meter: Meter,
): Promise<z.infer<S> | null> {
  const server = `${conn.baseURL ?? ""}|${conn.memoryModel}`;
  const ask = (jsonMode: boolean) =>
    metered(meter, "model", () =>
      openaiClient(conn, { maxRetries: 1 }).chat.completions.create({
        model: conn.memoryModel,
        ...(jsonMode ? { response_format: { type: "json_object" as const } } : {}),
        messages: [
          { role: "system", content: system },
          { role: "user", content: user },
        ],
      }),
    );
  let res;
  try {
    res = await ask(!noJsonMode.has(server));
  } catch (e) {
    if (!refusesJsonMode(e) || noJsonMode.has(server)) throw e;
    noJsonMode.add(server);
    res = await ask(false);
  }
  const choice = res.choices[0];
  // Cut off by the token limit: whatever came is incomplete.
  if (!choice || choice.finish_reason === "length") return null;
  const parsed = schema.safeParse(jsonFromReply(choice.message?.content ?? ""));
  return parsed.success ? parsed.data : null;
}

/** A 400/422 about the request's response format (not about the model, the key or the prompt). */
export function refusesJsonMode(e: unknown): boolean {
  return (
    e instanceof OpenAI.APIError &&
    (e.status === 400 || e.status === 422) &&
    /response_format|json_object|json mode/i.test(e.message)
  );
}
