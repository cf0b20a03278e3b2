// What a turn sends of the thread's attachments. Documents go into the system prompt as one block: whole while they
// fit the attachment budget, else the passages nearest the question by words and meaning (lib/attachments/passages.ts),
// each labelled with its file and page so the answer can say where it came from. Pictures go with the messages they
// were sent with, as image parts, to a model the admin marked as seeing images.
import { readBytes } from "./file-store";
import type OpenAI from "openai";
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { attributeMemories } from "@/lib/memory/attribution";
import { getConfig } from "@/lib/config";
import { embedTexts, resolveEmbedder } from "@/lib/llm/embeddings";
import type { ModelConnection } from "@/lib/llm/connection";
import { knownToRefuse } from "@/lib/llm/server-quirks";
import { callFunction } from "@/lib/db/function-calls";
import { parsedDocs, rankPassages, type ParsedDoc, type Passage, type QuestionVector } from "./passages";

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

const label = (p: { name: string; page: number | null }) => (p.page ? `${p.name}, p. ${p.page}` : p.name);

/** The documents block within `budget` tokens: whole documents when they all fit, else the nearest passages. */
export function documentsBlock(docs: ParsedDoc[], question: string, budget: number, q: QuestionVector = null) {
  if (!docs.length) return { block: null, given: [] as GivenPassage[] };
  const whole = docs.reduce((s, d) => s + d.tokens, 0) <= budget;
  const all = docs.flatMap((d) => d.passages);
  let chosen: Passage[];
  if (whole) chosen = all;
  else {
    chosen = [];
    let used = 0;
    for (const p of rankPassages(docs, question, q)) {
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
    const empty = d.passages.length ? "" : "(no text could be read from it: a scan, or pictures only)";
    return `<document name="${d.name.replace(/"/g, "'")}"${d.pages ? ` pages="${d.pages}"` : ""} given="${how}">\n${body || empty}\n</document>`;
  });
  const block =
    "Documents the user attached to this conversation. When you use one, say where from, like [" +
    `${label({ name: docs[0].name, page: docs[0].pages ? 1 : null })}].\n${parts.join("\n")}`;
  return { block, given: chosen.map(({ attachmentId, name, page, text }) => ({ attachmentId, name, page, text })) };
}

/** The thread's sent attachments, without their text or bytes (batched with the turn's other reads). */
export function threadAttachmentRows(db: Db, threadId: string) {
  return callFunction<{
    id: string;
    name: string;
    kind: "image" | "document";
    tokens: number;
    pages: number | null;
    itemId: string;
    mime: string;
  }>(db, { call: "mnemo_thread_attachments($1)", params: [threadId] });
}
type Row = Awaited<ReturnType<typeof threadAttachmentRows>>[number];

/** The documents block and the window's pictures, from the thread's rows (texts read only when not parsed yet). */
export async function attachmentsForTurn(
  db: Db,
  c: ContentCipher,
  rows: Row[],
  opts: { windowItemIds: string[]; question: string; budget: number; vision: boolean },
): Promise<TurnAttachments> {
  if (!rows.length) return NO_ATTACHMENTS;
  const docs = await parsedDocs(
    db,
    c,
    rows.filter((r) => r.kind === "document"),
  );
  // The question's meaning matters only when the documents do not all fit.
  const ranked = docs.reduce((n, d) => n + d.tokens, 0) > opts.budget && docs.some((d) => d.vectorModel);
  const q = ranked ? await questionVector(db, opts.question) : null;
  const { block, given } = documentsBlock(docs, opts.question, opts.budget, q);
  const inWindow = new Set(opts.windowItemIds);
  const pictures = rows.filter((r) => r.kind === "image" && inWindow.has(r.itemId!));
  const images = new Map<string, ImagePart[]>();
  if (opts.vision && pictures.length) {
    const data = await db.attachment.findMany({
      where: { id: { in: pictures.map((p) => p.id) } },
      select: { id: true, data: true, objectKey: true },
    });
    for (const p of pictures) {
      const d = data.find((x) => x.id === p.id);
      if (!d) continue;
      const base64 = (await readBytes(c, d)).toString("base64");
      const part: ImagePart = { type: "image_url", image_url: { url: `data:${p.mime};base64,${base64}` } };
      images.set(p.itemId!, [...(images.get(p.itemId!) ?? []), part]);
    }
  }
  return { block, given, images, imagesWithheld: opts.vision ? 0 : pictures.length };
}

/** Of a prompt limit known for the model, the share attached documents may take. */
const DOCUMENT_SHARE = 0.3;

/**
 * What an answer is given of the thread's files: the documents within the attachment budget (a share of a known
 * prompt limit at most), the window's pictures for a model that sees images (marked so by the admin and not found
 * refusing them lately), and the refusal to say when the question's own pictures cannot go to this model.
 */
export async function attachmentsForAnswer(
  db: Db,
  c: ContentCipher,
  files: Row[],
  opts: {
    conn: Pick<ModelConnection, "baseURL" | "chatModel" | "chatVision">;
    windowItemIds: string[];
    question: string;
    questionItemId: string;
    promptLimit: number | null;
  },
): Promise<TurnAttachments> {
  if (!files.length) return NO_ATTACHMENTS;
  const { conn, promptLimit } = opts;
  const configured = getConfig().attachments.tokenBudget;
  const vision = !!conn.chatVision && !knownToRefuse("images", conn, conn.chatModel);
  const attached = await attachmentsForTurn(db, c, files, {
    windowItemIds: opts.windowItemIds,
    question: opts.question,
    budget: promptLimit === null ? configured : Math.min(configured, Math.floor(promptLimit * DOCUMENT_SHARE)),
    vision,
  });
  if (!attached.imagesWithheld) return attached;
  const own = files.filter((f) => f.kind === "image" && f.itemId === opts.questionItemId).length;
  return { ...attached, refusal: picturesRefused(own, vision, conn.chatModel) };
}

/**
 * The question's vector for ranking passages: recall embedded the same words a moment ago, so it comes from the
 * recent vectors (lib/llm/recent-vectors.ts); a slow or failing embedder leaves the ranking to words.
 */
async function questionVector(db: Db, question: string): Promise<QuestionVector> {
  const e = await resolveEmbedder(db).catch(() => null);
  if (!e) return null;
  const opts = { timeoutMs: getConfig().embeddingTimeoutMs, maxRetries: 0, priority: true };
  return embedTexts(e, [question], opts).then(
    ([vector]) => ({ model: e.model, vector }),
    () => null,
  );
}

/** A model that does not see images is not sent the question's pictures: the user is told which model, and why. */
export function picturesRefused(questionImages: number, vision: boolean, model: string): string | null {
  if (!questionImages || vision) return null;
  return `${model} does not take pictures, so this message was not sent to it. Pick a model that sees images (the model picker, or “Regenerate with…”), or ask without the picture. Your message is kept.`;
}

/** A model marked as seeing images whose server refused the picture anyway. */
export function picturesRefusedByServer(model: string): string {
  return `The model server refused the picture: ${model} does not take images there. Pick a model that sees images (the model picker, or “Regenerate with…”), or ask without the picture. Your message is kept.`;
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
