// One call to the memory model that must answer with JSON of a known shape: JSON mode asked for, the object taken
// from whatever wraps it (lib/llm/model-reply.ts), checked with zod. Malformed or cut-off output is null (the caller
// changes nothing); endpoint errors throw (the job retries).
import type { z } from "zod";
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
