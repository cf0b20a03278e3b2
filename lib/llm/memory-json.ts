// One call to the memory model that must answer with JSON of a known shape:
// response_format json_object, code fences tolerated, checked with zod.
// Malformed output is null (the caller changes nothing); endpoint errors throw
// (the job retries).
import type { z } from "zod";
import type { ModelConnection } from "./connection";
import { openaiClient } from "./client";
import { metered, type Meter } from "./metered";

/** `meter`: whose daily allowance the call uses (checked before, counted after; lib/llm/metered.ts). */
export async function askMemoryModelJson<S extends z.ZodType>(
  conn: ModelConnection,
  system: string,
  user: string,
  schema: S,
  meter: Meter,
): Promise<z.infer<S> | null> {
  const res = await metered(meter, "model", () =>
    openaiClient(conn, { maxRetries: 1 }).chat.completions.create({
      model: conn.memoryModel,
      response_format: { type: "json_object" },
      messages: [
        { role: "system", content: system },
        { role: "user", content: user },
      ],
    }),
  );
  const raw = (res.choices[0]?.message?.content ?? "").replace(/^```(?:json)?\s*|\s*```$/g, "");
  try {
    return schema.parse(JSON.parse(raw));
  } catch {
    return null;
  }
}
