// What a turn sends of the thread's attachments. Documents go into the system prompt as one block: whole while they
// fit the attachment budget, else the passages nearest the question (ranked by BM25 over the index's stemmed words),
// each labelled with its file and page so the answer can say where it came from. Pictures go with the messages they
// were sent with, as image parts, to a model the admin marked as seeing images.
import type OpenAI from "openai";
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { indexWords } from "@/lib/crypto/content";
import { countTokens } from "@/lib/memory/tokens";
import { attributeMemories } from "@/lib/memory/attribution";
import { PAGE_BREAK } from "./extract";

type ImagePart = OpenAI.Chat.Completions.ChatCompletionContentPartImage;

/** A passage given to the model: its file, page (null: a file without pages) and text. */
export type GivenPassage = { attachmentId: string; name: string; page: number | null; text: string };
/** Where an answer's passages came from, as stored on the answer (Item.sources). */
export type Source = { a: string; p: number | null };

export type TurnAttachments = {
  /** The documents block for the system prompt (null: the thread has none). */
  block: string | null;
  given: GivenPassage[];
  /** Image parts by the id of the message they were sent with (messages in the window only). */
  images: Map<string, ImagePart[]>;
  /** Pictures of the window's messages a model without image input could not be given. */
  imagesWithheld: number;
  /** Why the turn is not asked at all (the question's pictures, for a model that does not see images). */
  refusal?: string | null;
};

export const NO_ATTACHMENTS: TurnAttachments = { block: null, given: [], images: new Map(), imagesWithheld: 0 };

/** Words in a passage, about (a passage is cut at a paragraph or sentence near it). */
const PASSAGE_WORDS = 180;

type Doc = { id: string; name: string; text: string; tokens: number; pages: number | null };
type Passage = GivenPassage & { position: number; tokens: number };

/** A document's passages in order, each within one page. */
export function splitPassages(doc: Doc): Passage[] {
  const out: Passage[] = [];
  const pages = doc.text.split(PAGE_BREAK);
  pages.forEach((pageText, i) => {
    const page = doc.pages ? i + 1 : null;
    let words = 0;
    let buf: string[] = [];
    const flush = () => {
      const text = buf.join(" ").trim();
      if (text) out.push({ attachmentId: doc.id, name: doc.name, page, text, position: out.length, tokens: 0 });
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
  for (const p of out) p.tokens = countTokens(p.text);
  return out;
}

/** The passages ranked by BM25 against the question (k1 1.2, b 0.75), best first. */
export function rankPassages(passages: Passage[], question: string): Passage[] {
  const terms = [...new Set(indexWords(question))];
  if (!terms.length) return passages;
  const words = passages.map((p) => indexWords(p.text));
  const avg = words.reduce((s, w) => s + w.length, 0) / Math.max(1, words.length);
  const df = new Map(terms.map((t) => [t, words.filter((w) => w.includes(t)).length]));
  const score = words.map((w) => {
    const tf = new Map<string, number>();
    for (const x of w) if (df.has(x)) tf.set(x, (tf.get(x) ?? 0) + 1);
    let s = 0;
    for (const t of terms) {
      const f = tf.get(t) ?? 0;
      if (!f) continue;
      const idf = Math.log(1 + (passages.length - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
      s += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * w.length) / avg));
    }
    return s;
  });
  return passages
    .map((p, i) => ({ p, s: score[i], i }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .map((x) => x.p);
}

const label = (p: { name: string; page: number | null }) => (p.page ? `${p.name}, p. ${p.page}` : p.name);

/** The documents block within `budget` tokens: whole documents when they all fit, else the nearest passages. */
export function documentsBlock(docs: Doc[], question: string, budget: number) {
  if (!docs.length) return { block: null, given: [] as GivenPassage[] };
  const whole = docs.reduce((s, d) => s + d.tokens, 0) <= budget;
  const all = docs.flatMap(splitPassages);
  let chosen: Passage[];
  if (whole) chosen = all;
  else {
    chosen = [];
    let used = 0;
    for (const p of rankPassages(all, question)) {
      if (used + p.tokens > budget) continue;
      chosen.push(p);
      used += p.tokens;
    }
    // In reading order: a passage followed by the next reads as the document does.
    chosen.sort(
      (a, b) =>
        docs.findIndex((d) => d.id === a.attachmentId) - docs.findIndex((d) => d.id === b.attachmentId) ||
        a.position - b.position,
    );
  }
  const parts = docs.map((d) => {
    const mine = chosen.filter((p) => p.attachmentId === d.id);
    const how = whole ? "whole" : `${mine.length} passages nearest the question`;
    const body = mine.map((p) => (p.page ? `[p. ${p.page}] ${p.text}` : p.text)).join("\n");
    const empty = d.text.trim() ? "" : "(no text could be read from it: a scan, or pictures only)";
    return `<document name="${d.name.replace(/"/g, "'")}"${d.pages ? ` pages="${d.pages}"` : ""} given="${how}">\n${body || empty}\n</document>`;
  });
  const block =
    "Documents the user attached to this conversation. When you use one, say where from, like [" +
    `${label({ name: docs[0].name, page: docs[0].pages ? 1 : null })}].\n${parts.join("\n")}`;
  return { block, given: chosen.map(({ attachmentId, name, page, text }) => ({ attachmentId, name, page, text })) };
}

/** Reads the thread's attachments for a turn: documents' text, and the pictures of the messages in the window. */
export async function attachmentsForTurn(
  db: Db,
  c: ContentCipher,
  opts: { threadId: string; windowItemIds: string[]; question: string; budget: number; vision: boolean },
): Promise<TurnAttachments> {
  const rows = await db.attachment.findMany({
    where: { threadId: opts.threadId, itemId: { not: null } },
    select: { id: true, name: true, kind: true, text: true, tokens: true, pages: true, itemId: true, mime: true },
    orderBy: { createdAt: "asc" },
  });
  if (!rows.length) return NO_ATTACHMENTS;
  const docs = rows
    .filter((r) => r.kind === "document")
    .map((r) => ({ id: r.id, name: c.open(r.name), text: c.open(r.text ?? ""), tokens: r.tokens, pages: r.pages }));
  const { block, given } = documentsBlock(docs, opts.question, opts.budget);
  const inWindow = new Set(opts.windowItemIds);
  const pictures = rows.filter((r) => r.kind === "image" && inWindow.has(r.itemId!));
  const images = new Map<string, ImagePart[]>();
  if (opts.vision && pictures.length) {
    const data = await db.attachment.findMany({
      where: { id: { in: pictures.map((p) => p.id) } },
      select: { id: true, data: true },
    });
    for (const p of pictures) {
      const d = data.find((x) => x.id === p.id);
      if (!d) continue;
      const part: ImagePart = { type: "image_url", image_url: { url: `data:${p.mime};base64,${c.open(d.data)}` } };
      images.set(p.itemId!, [...(images.get(p.itemId!) ?? []), part]);
    }
  }
  return { block, given, images, imagesWithheld: opts.vision ? 0 : pictures.length };
}

/** A model that does not see images is not sent the question's pictures: the user is told which model, and why. */
export function picturesRefused(questionImages: number, vision: boolean, model: string): string | null {
  if (!questionImages || vision) return null;
  return `${model} does not take pictures, so this message was not sent to it. Pick a model that sees images (the model picker, or “Regenerate with…”), or ask without the picture. Your message is kept.`;
}

/** The passages the answer drew on (attribution as for memories, lib/memory/attribution.ts), as stored. */
export function passagesUsed(answer: string, question: string, given: GivenPassage[]): Source[] {
  if (!given.length || !answer.trim()) return [];
  const ids = new Set(
    attributeMemories(
      answer,
      question,
      given.map((p, i) => ({ id: String(i), text: p.text })),
    ),
  );
  const cited = given.filter(
    (p) => answer.includes(`[${label(p)}`) || (p.page && answer.includes(`p. ${p.page}`) && answer.includes(p.name)),
  );
  const used = [...given.filter((_, i) => ids.has(String(i))), ...cited];
  const seen = new Set<string>();
  return used
    .map((p) => ({ a: p.attachmentId, p: p.page }))
    .filter((s) => !seen.has(`${s.a}:${s.p}`) && !!seen.add(`${s.a}:${s.p}`));
}
