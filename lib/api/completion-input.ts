// What /v1/chat/completions accepts: OpenAI's request, checked for shape. Null is read as absent wherever OpenAI's
// schema allows it; the parameters Mnemo does not use itself go to the model server as sent (`FORWARDED`); the legacy
// function calling becomes the tool calls it was replaced by.
import { z } from "zod";
import { present } from "./nullable";

const contentPart = z.object({ type: z.string().max(40), text: z.string().optional() }).passthrough();
// OpenAI's schema allows null for every optional field: null is taken as absent (`.nullish()`, dropped by `present`).
export const messageSchema = z
  .object({
    // "function" is the legacy tool result (its `name` names the function): taken as a tool message.
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    content: z.union([z.string(), z.array(contentPart).max(200), z.null()]).optional(),
    name: z.string().max(64).nullish(),
    tool_calls: z
      .array(
        z.object({
          id: z.string().max(200),
          type: z.literal("function"),
          function: z.object({ name: z.string().max(200), arguments: z.string().max(200_000) }),
        }),
      )
      .max(64)
      .nullish(),
    tool_call_id: z.string().max(200).nullish(),
  })
  .passthrough()
  .transform(present);
const toolSchema = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string().min(1).max(64), description: z.string().max(4000).optional() }).passthrough(),
});

/** What goes to the model server as the client sent it (checked only for shape; the server judges the values). */
const forwarded = {
  response_format: z
    .object({ type: z.enum(["text", "json_object", "json_schema"]), json_schema: z.unknown().optional() })
    .passthrough()
    .nullish(),
  seed: z.number().int().nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  logit_bias: z.record(z.string(), z.number()).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  reasoning_effort: z.string().max(20).nullish(),
  n: z.number().int().min(1).max(8).nullish(),
};
export const FORWARDED = Object.keys(forwarded) as Array<keyof typeof forwarded>;

export const completionInput = z
  .object({
    model: z.string().max(200).nullish(),
    messages: z.array(messageSchema).min(1, "messages must not be empty").max(2000).transform(fromLegacyFunctionCalls),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).passthrough().nullish(),
    tools: z.array(toolSchema).max(128).nullish(),
    tool_choice: z.unknown().optional(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    max_tokens: z.number().int().min(1).max(1_000_000).nullish(),
    max_completion_tokens: z.number().int().min(1).max(1_000_000).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
    user: z.string().max(200).nullish(),
    ...forwarded,
  })
  .transform(present)
  .refine((r) => !(r.stream && (r.n ?? 1) > 1), {
    message: "n greater than 1 is not supported with stream: Mnemo streams one answer. Ask without stream.",
    path: ["n"],
  });

type ParsedMessage = z.output<typeof messageSchema>;

/**
 * The legacy function calling (an assistant's `function_call`, then the result as a `function` message named after
 * it) as the tool calls it became: each call gets an id, and its result answers that id.
 */
function fromLegacyFunctionCalls(messages: ParsedMessage[]) {
  let pending: string | undefined;
  return messages.map((m, i) => {
    const call = (m as { function_call?: { name?: unknown; arguments?: unknown } | null }).function_call;
    if (m.role === "assistant" && call && typeof call.name === "string") {
      pending = `call_legacy_${i}`;
      const fn = { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : "{}" };
      const { function_call: _, ...rest } = m as ParsedMessage & { function_call?: unknown };
      return { ...rest, tool_calls: [{ id: pending, type: "function" as const, function: fn }] };
    }
    if (m.role !== "function") return m;
    const id = pending ?? `call_legacy_${i}`;
    pending = undefined;
    return { ...m, role: "tool" as const, tool_call_id: id };
  });
}

export type CompletionInput = z.infer<typeof completionInput>;
