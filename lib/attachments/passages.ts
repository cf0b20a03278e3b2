// A document's passages: split at sentences and paragraphs within each page, ranked for a question by its words
// (BM25 over the index's stemmed words) and, once the document's passages have vectors (lib/attachments/vectors.ts),
// by its meaning too, the two fused on absolute scores as recall fuses them (lib/memory/recall.ts). A document is
// split and counted once per process and kept in an LRU: attachments never change, so no instance holds a stale copy.
import { LRUCache } from "lru-cache";
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { indexWords } from "@/lib/crypto/content";
import { countTokens } from "@/lib/memory/tokens";
import { cosine } from "@/lib/memory/vector-scores";
import { PAGE_BREAK } from "./extract";

/** Words in a passage, about (a passage is cut at a paragraph or sentence near it). */
const PASSAGE_WORDS = 180;

export type Doc = { id: string; name: string; text: string; tokens: number; pages: number | null };
/** A passage as ranked: its stemmed words counted once, when the document is first read. */
export type Passage = {
  attachmentId: string;
  name: string;
  page: number | null;
  text: string;
  position: number;
  tokens: number;
  tf: Map<string, number>;
  length: number;
  /** Its vector by the model named in `ParsedDoc.vectors`, once the document's passages were embedded. */
  vector?: Float32Array;
};
/** A document as a turn reads it: its passages, and the model their vectors came from (null: not embedded yet). */
export type ParsedDoc = Omit<Doc, "text"> & { passages: Passage[]; vectorModel: string | null; checkedAt: number };
/** The question's vector, by the embedding model that made it. */
export type QuestionVector = { model: string; vector: number[] } | null;

/** A document's passages in order, each within one page. */
export function splitPassages(doc: Doc): Passage[] {
  const out: Passage[] = [];
  doc.text.split(PAGE_BREAK).forEach((pageText, i) => {
    const page = doc.pages ? i + 1 : null;
    let words = 0;
    let buf: string[] = [];
    const flush = () => {
      const text = buf.join(" ").trim();
      if (text) {
        const base = { attachmentId: doc.id, name: doc.name, page, text, position: out.length };
        out.push({ ...base, tokens: 0, tf: new Map(), length: 0 });
      }
      buf = [];
      words = 0;
    };
    for (const sentence of pageText.split(/(?<=[.!?])\s+|\n{2,}/)) {
      const n = sentence.split(/\s+/).length;
      if (words && words + n > PASSAGE_WORDS) flush();
      buf.push(sentence.replace(/\s+/g, " "));
      words += n;
    }
    flush();
  });
  for (const p of out) {
    p.tokens = countTokens(p.text);
    const words = indexWords(p.text);
    p.length = words.length;
    for (const w of words) p.tf.set(w, (p.tf.get(w) ?? 0) + 1);
  }
  return out;
}

/** BM25 (k1 1.2, b 0.75) of each passage for the question's words. */
function wordScores(passages: Passage[], question: string): number[] {
  const terms = [...new Set(indexWords(question))];
  if (!terms.length) return passages.map(() => 0);
  const avg = passages.reduce((s, p) => s + p.length, 0) / Math.max(1, passages.length);
  const idf = new Map(
    terms.map((t) => {
      const df = passages.reduce((n, p) => n + (p.tf.has(t) ? 1 : 0), 0);
      return [t, Math.log(1 + (passages.length - df + 0.5) / (df + 0.5))];
    }),
  );
  return passages.map((p) =>
    terms.reduce((s, t) => {
      const f = p.tf.get(t) ?? 0;
      return f ? s + (idf.get(t)! * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * p.length) / avg)) : s;
    }, 0),
  );
}

/**
 * Each passage's closeness in meaning, as a share of the way from the least similar passage to a perfect match (a
 * flat field of similarities scores low throughout; a standout high). 0 for passages without a vector by the
 * question's model.
 */
function meaningScores(passages: Passage[], q: QuestionVector, model: (p: Passage) => string | null): number[] {
  if (!q) return passages.map(() => 0);
  const sims = passages.map((p) => (p.vector && model(p) === q.model ? cosine(q.vector, p.vector) : null));
  const known = sims.filter((x): x is number => x !== null);
  if (!known.length) return passages.map(() => 0);
  const floor = Math.min(...known);
  return sims.map((x) => (x === null || floor >= 1 ? 0 : Math.max(0, (x - floor) / (1 - floor))));
}

/** The passages best first: words (scaled to the best match) and meaning, added. */
export function rankPassages(docs: ParsedDoc[], question: string, q: QuestionVector = null): Passage[] {
  const passages = docs.flatMap((d) => d.passages);
  const models = new Map(docs.map((d) => [d.id, d.vectorModel]));
  const words = wordScores(passages, question);
  const best = Math.max(...words, 0);
  const meaning = meaningScores(passages, q, (p) => models.get(p.attachmentId) ?? null);
  return passages
    .map((p, i) => ({ p, s: (best > 0 ? words[i] / best : 0) + meaning[i], i }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.p);
}

// Parsed documents by attachment id, in this process: a 300-page PDF is split and its words stemmed on its first
// turn (about 90 ms), not on every turn. Vectors arrive later (a job): a document read without them looks again
// after VECTORS_RECHECK_MS.
const g = globalThis as typeof globalThis & { __mnemoParsedDocs?: LRUCache<string, ParsedDoc> };
const parsed = (g.__mnemoParsedDocs ??= new LRUCache<string, ParsedDoc>({
  maxSize: 64 * 1024 * 1024,
  sizeCalculation: (d) =>
    Math.max(
      1,
      d.passages.reduce((n, p) => n + p.text.length * 3 + (p.vector?.length ?? 0) * 4, 0),
    ),
}));
const VECTORS_RECHECK_MS = 15_000;

/** A document just uploaded, split while its text is in hand: its first turn here need not read and split it. */
export function rememberParsed(doc: Omit<Doc, "text">, passages: Passage[]) {
  parsed.set(doc.id, { ...doc, passages, vectorModel: null, checkedAt: Date.now() });
}

type DocRow = { id: string; name: string; tokens: number; pages: number | null };
type Stored = { id: string; text: string | null; passageModel: string | null; passageVectors: number[] | null };

/** The documents of these rows, parsed: texts read only for those not parsed here yet, vectors once they exist. */
export async function parsedDocs(db: Db, c: ContentCipher, rows: DocRow[]): Promise<ParsedDoc[]> {
  const now = Date.now();
  const missing = rows.filter((r) => !parsed.has(r.id));
  const unvectored = rows.filter((r) => {
    const d = parsed.get(r.id);
    return d && !d.vectorModel && now - d.checkedAt > VECTORS_RECHECK_MS;
  });
  if (missing.length || unvectored.length) {
    const stored = await db.$queryRaw<Stored[]>`
      SELECT id, CASE WHEN id = ANY(${missing.map((r) => r.id)}::text[]) THEN text END AS text, "passageModel",
             "passageVectors"
      FROM "Attachment" WHERE id = ANY(${[...missing, ...unvectored].map((r) => r.id)}::text[])`;
    for (const r of missing) {
      const row = stored.find((s) => s.id === r.id);
      const doc = { id: r.id, name: c.open(r.name), tokens: r.tokens, pages: r.pages };
      const passages = splitPassages({ ...doc, text: row?.text ? c.open(row.text) : "" });
      parsed.set(r.id, { ...doc, passages, vectorModel: null, checkedAt: now });
    }
    for (const r of [...missing, ...unvectored])
      attachVectors(
        parsed.get(r.id)!,
        stored.find((s) => s.id === r.id),
        now,
      );
  }
  return rows.flatMap((r) => {
    const d = parsed.get(r.id);
    return d ? [d] : [];
  });
}

/** Vectors just made for a document in this process (lib/attachments/vectors.ts): its next turn here uses them. */
export function rememberVectors(id: string, model: string, flat: number[]) {
  const doc = parsed.get(id);
  if (doc) attachVectors(doc, { id, text: null, passageModel: model, passageVectors: flat }, Date.now());
}

/** Gives each passage its vector from the stored ones (end to end, in passage order), when they match its count. */
function attachVectors(doc: ParsedDoc, row: Stored | undefined, now: number) {
  doc.checkedAt = now;
  const flat = row?.passageVectors;
  if (!row?.passageModel || !flat?.length || !doc.passages.length || flat.length % doc.passages.length) return;
  const dims = flat.length / doc.passages.length;
  doc.passages.forEach((p, i) => (p.vector = Float32Array.from(flat.slice(i * dims, (i + 1) * dims))));
  doc.vectorModel = row.passageModel;
}
