// What an OpenAI-compatible server turned out not to support, learned from its refusals and shared by every app
// instance (lib/llm/server-notes.ts):
// LM Studio answers JSON mode (`response_format: json_object`) with a 400; Ollama answers `tools` with a 400 for any
// model whose template has no tool calling ("deepseek-r1:latest does not support tools"), vLLM without its tool
// parser likewise; OpenAI's reasoning models refuse a temperature other than 1; older Azure API versions and some
// proxies refuse `stream_options` (the usage of a streamed answer). Mnemo asks such a server again
// without the feature, and from then on without it at once, for an hour: a server can be upgraded, or a model
// swapped behind the same name, without restarting Mnemo.
import OpenAI from "openai";
import type { ModelConnection } from "./connection";
import { forgetLocally, NOTE_TTL_MS, readNote, writeNote } from "./server-notes";

export type Feature = "jsonMode" | "tools" | "temperature" | "streamUsage" | "images";

/** How long a refusal is trusted before the feature is asked for again. */
export const REFUSAL_TTL_MS = NOTE_TTL_MS;

/** A server and model, as the learned quirks are kept. */
export const serverKey = (conn: Pick<ModelConnection, "baseURL">, model: string) => `${conn.baseURL ?? ""}|${model}`;

/** Whether this server and model refused the feature within the last hour (here or in another instance). */
export function knownToRefuse(feature: Feature, conn: Pick<ModelConnection, "baseURL">, model: string): boolean {
  return readNote(serverKey(conn, model), `refused:${feature}`) !== null;
}

/** Remembers that this server and model refused the feature (and tells the other instances). */
export function rememberRefusal(feature: Feature, conn: Pick<ModelConnection, "baseURL">, model: string): void {
  writeNote(serverKey(conn, model), `refused:${feature}`);
}

/** Forgets every refusal in this process (a test starts; the admin's save forgets them everywhere, server-notes.ts). */
export function forgetRefusals(): void {
  forgetLocally(["refused"]);
}

const REFUSALS: Record<Feature, RegExp> = {
  jsonMode: /response_format|json_object|json mode/i,
  temperature: /temperature/i,
  streamUsage: /stream_options|include_usage/i,
  // OpenAI ("image_url is only supported by certain models"), Bedrock, LM Studio, vLLM, DeepSeek ("unknown variant
  // `image_url`"), gateways ("No endpoints found that support image input").
  images:
    /image_url|image input|images? (?:are |is )?not supported|(?:does not|doesn't) support (?:the )?images?|not a multimodal|multimodal/i,
  tools:
    /support tools|tools? (?:are |is )?not supported|tool[_ ]choice|tool[_ ]call(?:ing|s)? (?:are |is )?not (?:supported|enabled)|function calling/i,
};

/** A 400/422 refusing the feature (not one about the model, the key or the prompt). */
export function refusesFeature(feature: Feature, e: unknown): boolean {
  return e instanceof OpenAI.APIError && (e.status === 400 || e.status === 422) && REFUSALS[feature].test(e.message);
}

/**
 * Runs `call` with the optional features it can do without, leaving out those this server and model are known to
 * refuse; when the server refuses one of them, remembers that and runs it again without it.
 */
export async function withoutRefused<T>(
  conn: Pick<ModelConnection, "baseURL">,
  model: string,
  optional: Feature[],
  call: (use: ReadonlySet<Feature>) => Promise<T>,
): Promise<T> {
  const use = new Set(optional.filter((f) => !knownToRefuse(f, conn, model)));
  for (;;) {
    try {
      return await call(use);
    } catch (e) {
      const feature = [...use].find((f) => refusesFeature(f, e));
      if (!feature) throw e;
      rememberRefusal(feature, conn, model);
      use.delete(feature);
    }
  }
}
