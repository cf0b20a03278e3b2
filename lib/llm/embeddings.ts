// Embeddings from the configured OpenAI-compatible endpoint (/v1/embeddings):
// OpenAI text-embedding-3-small, Ollama nomic-embed-text, vLLM, … The vector
// size is whatever the model returns; nothing here assumes one.
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { cutGraphemes } from "@/lib/text/policy";
import { describeModelError, openaiClient } from "./client";
import { resolveConnectionCached, type ModelConnection } from "./connection";
import { recordUsage } from "@/lib/account/usage-ledger";

export type Embedder = { connection: ModelConnection; model: string };

/** Longer inputs are cut: every embedding model has an input limit (8k tokens for OpenAI's, 2k–8k locally). */
export const EMBED_MAX_CHARS = 6000;

/** The configured embedding model, or null when recall is lexical only. */
export async function resolveEmbedder(db: Db): Promise<Embedder | null> {
  const state = await resolveConnectionCached(db);
  if (!state.configured || !state.connection.embeddingModel) return null;
  return { connection: state.connection, model: state.connection.embeddingModel };
}

/** The vectors for `texts`, in order. Throws on an endpoint error or a malformed answer. */
export async function embedTexts(
  e: Embedder,
  texts: string[],
  opts: { timeoutMs?: number; maxRetries?: number; onTokens?: (tokens: number) => void } = {},
): Promise<number[][]> {
  if (!texts.length) return [];
  const res = await openaiClient(e.connection, {
    timeoutMs: opts.timeoutMs ?? 60_000,
    maxRetries: opts.maxRetries ?? 1,
  }).embeddings.create({
    model: e.model,
    input: texts.map((t) => cutGraphemes(t, EMBED_MAX_CHARS) || " "),
    encoding_format: "float",
  });
  opts.onTokens?.(res.usage?.total_tokens ?? 0);
  const out: number[][] = new Array(texts.length);
  for (const d of res.data ?? [])
    if (Number.isInteger(d.index) && d.index >= 0 && d.index < texts.length) out[d.index] = d.embedding;
  const dims = out[0]?.length ?? 0;
  for (let i = 0; i < texts.length; i++) {
    const v = out[i];
    if (!Array.isArray(v) || !v.length || v.length !== dims || !v.every(Number.isFinite)) {
      throw new Error(`The embedding endpoint returned no usable vector for input ${i} (model ${e.model}).`);
    }
  }
  return out;
}

const g = globalThis as typeof globalThis & { __mnemoEmbedDown?: boolean };

/**
 * The question's vector on the hot path: a short timeout and no retry. On any
 * failure the turn goes on with lexical recall; the log says so once per
 * outage (again only after a success).
 */
export async function embedQuery(
  db: Db,
  text: string,
  userId?: string,
): Promise<{ model: string; vector: number[] } | null> {
  const e = await resolveEmbedder(db).catch(() => null);
  if (!e) return null;
  try {
    const [vector] = await embedTexts(e, [text], {
      timeoutMs: getConfig().embeddingTimeoutMs,
      maxRetries: 0,
      // Counted in the user's ledger without holding the turn (the turn's limit check already ran beside it).
      onTokens: (tokens) =>
        userId && void recordUsage(db, userId, { embeddingCalls: 1, tokens }).catch(() => undefined),
    });
    if (g.__mnemoEmbedDown) console.log(`[mnemo] embeddings: ${e.model} answers again; recall by meaning is back`);
    g.__mnemoEmbedDown = false;
    return { model: e.model, vector };
  } catch (err) {
    if (!g.__mnemoEmbedDown) {
      console.warn(
        `[mnemo] embeddings: ${e.model} failed (${describeModelError(err)}); recalling by words only until it answers`,
      );
    }
    g.__mnemoEmbedDown = true;
    return null;
  }
}
