// A document's passages by meaning: after upload, a job embeds each passage (the built-in encoder, or the embedding
// endpoint) and keeps the vectors on the attachment, so a turn can rank the passages by the question's meaning as
// well as its words (lib/attachments/prompt.ts). Nothing on the turn's path waits for this: until the vectors are
// there, passages are ranked by words alone.
import type { Db } from "@/lib/db/client";
import { userContext } from "@/lib/user-context";
import { resolveEmbedder } from "@/lib/llm/embeddings";
import { embedForUser } from "@/lib/memory/embed";
import { enqueue } from "@/lib/jobs/queue";
import { rememberVectors, splitPassages } from "./passages";

/** Passages per embedding call (the encoder batches them; an endpoint takes them in one request). */
const BATCH = 64;

export function queuePassageVectors(db: Db, userId: string, attachmentId: string): Promise<void> {
  return enqueue(db, [
    { kind: "attachment-vectors", userId, payload: { attachmentId }, dedupeKey: `attachment-vectors:${attachmentId}` },
  ]);
}

/** Embeds a document's passages with the current embedding model, unless they already are (a job may run twice). */
export async function embedPassages(db: Db, attachmentId: string): Promise<void> {
  const e = await resolveEmbedder(db);
  if (!e) return;
  const row = await db.attachment.findUnique({
    where: { id: attachmentId },
    select: { userId: true, kind: true, text: true, tokens: true, pages: true, passageModel: true },
  });
  if (!row || row.kind !== "document" || row.passageModel === e.model) return;
  const u = await userContext(db, row.userId);
  const text = row.text === null ? "" : u.cipher.open(row.text);
  const passages = splitPassages({ id: attachmentId, name: "", text, tokens: row.tokens, pages: row.pages });
  if (!passages.length) return;
  const vectors: number[][] = [];
  for (let i = 0; i < passages.length; i += BATCH) {
    const got = await embedForUser(
      db,
      e,
      row.userId,
      passages.slice(i, i + BATCH).map((p) => p.text),
    );
    if (!got) return; // over the daily limit: the passages stay ranked by words
    vectors.push(...got);
  }
  const flat = vectors.flat();
  await db.$executeRaw`
    UPDATE "Attachment" SET "passageVectors" = ${flat}::real[], "passageModel" = ${e.model}
    WHERE id = ${attachmentId}`;
  rememberVectors(attachmentId, e.model, flat);
}
