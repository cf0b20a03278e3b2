// The vectors of the last few hundred texts embedded in this process, for a few minutes. A turn encodes its question
// on the hot path, and the embed job then asks for the vector of the same text again (the user's message): reusing it
// spares a third of the built-in encoder's work per turn (docs/benchmarks.md, "Where a turn's CPU goes") or an
// endpoint's call. Keyed by the embedder and a hash of the text; no text is kept.
import crypto from "node:crypto";

const MAX_ENTRIES = 512;
const TTL_MS = 10 * 60_000;

type Entry = { vector: number[]; at: number };
const g = globalThis as typeof globalThis & { __mnemoRecentVectors?: Map<string, Entry> };
const cache = () => (g.__mnemoRecentVectors ??= new Map());

const keyOf = (embedder: string, text: string) =>
  `${embedder}\u0000${crypto.createHash("sha256").update(text).digest("base64")}`;

/** The vector this embedder gave the text lately, if any. */
export function recentVector(embedder: string, text: string): number[] | undefined {
  const key = keyOf(embedder, text);
  const hit = cache().get(key);
  if (!hit) return undefined;
  cache().delete(key);
  if (Date.now() - hit.at > TTL_MS) return undefined;
  cache().set(key, hit); // most recently used last
  return hit.vector;
}

export function rememberVector(embedder: string, text: string, vector: number[]): void {
  const c = cache();
  c.delete(keyOf(embedder, text));
  c.set(keyOf(embedder, text), { vector, at: Date.now() });
  while (c.size > MAX_ENTRIES) c.delete(c.keys().next().value!);
}

/** Forgets every vector: the connection changed (an endpoint's model of the same name may now be another). */
export function forgetRecentVectors(): void {
  cache().clear();
}
