// POST /v1/embeddings: OpenAI's embeddings, made by the embedding model Mnemo uses for recall (the configured
// endpoint's, else the sentence encoder built into Mnemo, on this machine). A local embeddings endpoint for any
// OpenAI client, with the user's key; counted in their usage ledger like Mnemo's own embedding calls.
import { z } from "zod";
import type { KeyCaller } from "@/lib/keys/api-keys";
import { AppError } from "@/lib/errors";
import { embedTexts, resolveEmbedder } from "@/lib/llm/embeddings";
import { metered, UsageLimitSkip } from "@/lib/llm/metered";
import { countTokens } from "@/lib/memory/tokens";
import { present } from "./nullable";

const MAX_INPUTS = 2048;
const MAX_INPUT_CHARS = 32_000;

export const embeddingInput = z
  .object({
    model: z.string().max(200).nullish(),
    input: z.union([
      z.string().max(MAX_INPUT_CHARS),
      z.array(z.string().max(MAX_INPUT_CHARS)).min(1).max(MAX_INPUTS),
      z.array(z.number()).min(1),
      z.array(z.array(z.number())).min(1),
    ]),
    encoding_format: z.enum(["float", "base64"]).nullish(),
    dimensions: z.number().int().min(1).max(65_536).nullish(),
    user: z.string().max(200).nullish(),
  })
  .transform(present);
export type EmbeddingInput = z.infer<typeof embeddingInput>;

export async function createEmbeddings(caller: KeyCaller, input: EmbeddingInput) {
  const texts = typeof input.input === "string" ? [input.input] : input.input;
  if (!texts.every((t): t is string => typeof t === "string"))
    throw new AppError("input: token arrays are not supported here; send the text.", 400);
  const { db, userId } = caller.u;
  const embedder = await resolveEmbedder(db);
  if (!embedder)
    throw new AppError(
      "Embeddings are off on this Mnemo: the admin sets an embedding model, or turns the built-in encoder on.",
      400,
    );
  let reported: number | undefined;
  const res = await metered({ db, userId }, "embedding", async () => {
    const vectors = await embedTexts(embedder, texts, { onTokens: (n) => (reported = n), timeoutMs: 60_000 });
    return { vectors, usage: { total_tokens: reported ?? texts.reduce((n, t) => n + countTokens(t), 0) } };
  }).catch((e) => {
    if (e instanceof UsageLimitSkip) throw new AppError(e.message, 429);
    throw e;
  });
  const dims = res.vectors[0]?.length ?? 0;
  if (input.dimensions && input.dimensions !== dims)
    throw new AppError(
      `dimensions: ${embedder.model} gives vectors of ${dims} dimensions, not ${input.dimensions}.`,
      400,
    );
  const base64 = input.encoding_format === "base64";
  return {
    object: "list" as const,
    data: res.vectors.map((v, index) => ({
      object: "embedding" as const,
      index,
      embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v,
    })),
    model: embedder.model,
    usage: { prompt_tokens: res.usage.total_tokens, total_tokens: res.usage.total_tokens },
  };
}
