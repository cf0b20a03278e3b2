// Embeddings from the configured OpenAI-compatible endpoint (/v1/embeddings):
// OpenAI text-embedding-3-small, Ollama nomic-embed-text, vLLM, … The vector
// size is whatever the model returns; nothing here assumes one. With no
// endpoint model set, the built-in sentence encoder gives them on this machine
// (lib/llm/builtin-embedder.ts), unless MNEMO_BUILTIN_EMBEDDINGS=off.
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { cutGraphemes } from "@/lib/text/policy";
import { describeModelError, openaiClient } from "./client";
import { resolveConnectionCached, type ModelConnection } from "./connection";
import { recordUsage } from "@/lib/account/usage-ledger";
import { BUILTIN_EMBEDDING_MODEL, builtinEmbedderInstalled, embedBuiltin, type WorkerScan } from "./builtin-embedder";
import { recentVector, rememberVector } from "./recent-vectors";
import { turnStep } from "@/lib/ops/turn-timeline";

/** An endpoint's embedding model, or the built-in one (`connection: null`: nothing leaves the machine). */
export type Embedder = { connection: ModelConnection; model: string } | { connection: null; model: string };

/** Longer inputs are cut: every embedding model has an input limit (8k tokens for OpenAI's, 2k–8k locally). */
export const EMBED_MAX_CHARS = 6000;

const BUILTIN: Embedder = { connection: null, model: BUILTIN_EMBEDDING_MODEL };

/** The built-in encoder, when it is on and installed. */
export function builtinEmbedder(): Embedder | null {
  return getConfig().builtinEmbeddings && builtinEmbedderInstalled() ? BUILTIN : null;
}

/** Whether this connection gives vectors: an endpoint's embedding model, or the built-in one. */
export const embeddingsOn = (conn: ModelConnection): boolean => !!conn.embeddingModel || !!builtinEmbedder();

/** The configured embedding model, else the built-in one, or null when recall is lexical only. */
export async function resolveEmbedder(db: Db): Promise<Embedder | null> {
  const state = await resolveConnectionCached(db);
  if (state.configured && state.connection.embeddingModel)
    return { connection: state.connection, model: state.connection.embeddingModel };
  return builtinEmbedder();
}

/**
 * Loads the built-in encoder now, not on the first question (whose wait for a vector is short: a first load can take
 * longer than that wait, and the question goes on by words). The server does at start; benchmarks before timing.
 */
export async function warmBuiltinEmbedder(db: Db): Promise<void> {
  const e = await resolveEmbedder(db);
  if (e && !e.connection) await embedTexts(e, ["warm up"]);
}

type EmbedOptions = {
  timeoutMs?: number;
  maxRetries?: number;
  onTokens?: (tokens: number) => void;
  priority?: boolean;
  /** With the built-in encoder, kept vectors its worker scans with the first text's vector (else settled empty). */
  scan?: WorkerScan;
};

/**
 * The vectors for `texts`, in order. A text this embedder gave a vector lately (a question, then the same message in
 * the embed job) is not sent again (lib/llm/recent-vectors.ts). Throws on an endpoint error or a malformed answer.
 */
export async function embedTexts(e: Embedder, texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
  const who = `${e.connection?.baseURL ?? "builtin"}\u0000${e.model}`;
  const out = texts.map((t) => recentVector(who, t));
  const missing = texts.flatMap((t, i) => (out[i] ? [] : [i]));
  if (missing[0] !== 0) opts.scan?.settle(null);
  if (missing.length) {
    const fresh = await computeVectors(
      e,
      missing.map((i) => texts[i]),
      missing[0] === 0 ? opts : { ...opts, scan: undefined },
    );
    missing.forEach((i, k) => {
      out[i] = fresh[k];
      rememberVector(who, texts[i], fresh[k]);
    });
  }
  return out as number[][];
}

async function computeVectors(e: Embedder, texts: string[], opts: EmbedOptions): Promise<number[][]> {
  if (!texts.length) return [];
  if (!e.connection)
    return withTimeout(embedBuiltin(texts, { priority: opts.priority, scan: opts.scan }), opts.timeoutMs);
  opts.scan?.settle(null);
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

/**
 * A new message's vector started before the turn's first write, when it costs nothing to start early: only the
 * built-in encoder (nothing leaves the machine; an endpoint's call waits until the turn knows memory is in use).
 * Recall then finds it ready and searches by meaning beside the word search, in the same round trip. `scan`: kept
 * vectors the encoder's worker ranks with it (lib/memory/vectors.ts, `prescanMessages`); what it found comes with the
 * vector as `prescan`.
 */
export async function earlyQueryVector<P>(
  db: Db,
  text: string,
  userId: string,
  scan?: (model: string) => (WorkerScan & { result: () => P | null }) | null,
): Promise<
  | { text: string; model: string; vector: Promise<{ model: string; vector: number[]; prescan?: P | null } | null> }
  | undefined
> {
  const e = await resolveEmbedder(db).catch(() => null);
  if (!e || e.connection) return undefined;
  const started = scan?.(e.model) ?? undefined;
  const vector = embedQuery(db, text, userId, started);
  return {
    text,
    model: e.model,
    vector: started ? vector.then((v) => v && { ...v, prescan: started.result() }) : vector,
  };
}

/** The built-in encoder runs here, so only waiting can be cut short (the vectors, when they come, are dropped). */
function withTimeout<T>(work: Promise<T>, ms: number | undefined): Promise<T> {
  if (!ms) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no vector within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Questions asked for a vector since start, and how many went on by words only (the fallback fired). */
type QuestionVectorStats = { asked: number; byWords: number; down: boolean; loggedAt: number; logged: number };
const g = globalThis as typeof globalThis & { __mnemoQuestionVectors?: QuestionVectorStats };
const stats = (): QuestionVectorStats =>
  (g.__mnemoQuestionVectors ??= { asked: 0, byWords: 0, down: false, loggedAt: 0, logged: 0 });
/** How often the log may repeat that questions go on by words only while it keeps happening. */
const FALLBACK_LOG_MS = 60_000;

/** The question-vector counters of this process (operators read them in the log; the load bench prints them). */
export function questionVectorStats(): { asked: number; byWords: number } {
  const { asked, byWords } = stats();
  return { asked, byWords };
}

/**
 * The question's vector on the hot path: a short timeout and no retry. On any
 * failure the turn goes on with lexical recall; the log says so when it starts, then at most once a minute with
 * how many questions it hit, and when vectors come back.
 */
export async function embedQuery(
  db: Db,
  text: string,
  userId?: string,
  scan?: WorkerScan,
): Promise<{ model: string; vector: number[] } | null> {
  const e = await resolveEmbedder(db).catch(() => null);
  if (!e) return (scan?.settle(null), null);
  const st = stats();
  st.asked++;
  try {
    const [vector] = await embedTexts(e, [text], {
      timeoutMs: getConfig().embeddingTimeoutMs,
      maxRetries: 0,
      priority: true,
      scan,
      // Counted in the user's ledger without holding the turn (the turn's limit check already ran beside it).
      onTokens: (tokens) =>
        userId && void recordUsage(db, userId, { embeddingCalls: 1, tokens }).catch(() => undefined),
    });
    turnStep("question vector");
    if (st.down) console.log(`[mnemo] embeddings: ${e.model} answers again; recall by meaning is back (${tally(st)})`);
    st.down = false;
    return { model: e.model, vector };
  } catch (err) {
    scan?.settle(null); // the kept vectors' changes wait no longer
    st.byWords++;
    // The first failure of an outage at once; while it lasts, a line a minute with the count.
    if (!st.down || Date.now() - st.loggedAt >= FALLBACK_LOG_MS) {
      console.warn(
        `[mnemo] embeddings: ${e.model} failed (${describeModelError(err)}); recalling by words only until it ` +
          `answers (${tally(st)})`,
      );
    }
    st.down = true;
    return null;
  }
}

/** "3 of 1,200 questions by words only since start", and marks the log as written now. */
function tally(st: QuestionVectorStats): string {
  st.loggedAt = Date.now();
  return `${st.byWords.toLocaleString("en")} of ${st.asked.toLocaleString("en")} questions by words only since start`;
}
