// A document's passages as rows the message search reads beside messages (lib/chat/search.ts), so a long document
// is found with its thread ("the clause about pets" finds lease.pdf, p. 3). Written with the attachment, in its
// transaction: a stored document is searchable at once, and nothing is half-indexed. Each passage's text is sealed
// and its words keyed like a message's (key rotation re-seals them: lib/crypto/sealed-columns.ts).
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { userContext } from "@/lib/user-context";
import type { Passage } from "./passages";
import { splitPassages } from "./passages";

/**
 * Passages indexed with the upload itself (a note, a letter, a CV: searchable at once). A longer document is indexed
 * by its background job a moment later: on the embedded database every statement waits its turn, and a burst of
 * long uploads indexed inline kept other requests waiting past a second.
 */
export const INLINE_PASSAGES = 40;
/** Rows per insert: a 300-page PDF has about a thousand passages. */
const BATCH = 500;

/** Writes a document's passages and marks it indexed (inside the caller's transaction). */
export async function indexPassages(
  db: Db,
  c: ContentCipher,
  at: { userId: string; attachmentId: string },
  passages: Passage[],
) {
  const rows = passages.map((p) => ({
    attachmentId: at.attachmentId,
    userId: at.userId,
    position: p.position,
    page: p.page,
    content: c.seal(p.text),
    searchTokens: c.searchTokens(p.text),
  }));
  for (let i = 0; i < rows.length; i += BATCH)
    await db.attachmentPassage.createMany({ data: rows.slice(i, i + BATCH) });
  await db.attachment.update({ where: { id: at.attachmentId }, data: { passagesIndexed: true } });
}

/** Documents per sweep when indexing those stored before passages were (each one read and split). */
const SWEEP_DOCUMENTS = 5;

/**
 * Indexes a few documents stored before their passages were searchable (the sweeper's, on every instance: each
 * document is claimed by its `passagesIndexed` flag in its own transaction, so two instances never index one twice).
 */
export async function indexOlderDocuments(db: Db): Promise<number> {
  const rows = await db.attachment.findMany({
    where: { kind: "document", passagesIndexed: false },
    select: { id: true },
    take: SWEEP_DOCUMENTS,
  });
  let done = 0;
  for (const { id } of rows) if (await indexDocument(db, id)) done++;
  return done;
}

/** Indexes one document's passages unless they are (claimed by its flag: two workers never index it twice). */
export async function indexDocument(db: Db, id: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    // Claims it: a second instance's update waits on this row and then finds it indexed.
    const claimed = await tx.attachment.updateMany({
      where: { id, kind: "document", passagesIndexed: false },
      data: { passagesIndexed: true },
    });
    if (!claimed.count) return false;
    const a = await tx.attachment.findUniqueOrThrow({
      where: { id },
      select: { userId: true, name: true, text: true, tokens: true, pages: true },
    });
    const c = (await userContext(tx as Db, a.userId)).cipher;
    const doc = { ...a, id, name: c.open(a.name), text: a.text === null ? "" : c.open(a.text) };
    await indexPassages(tx as Db, c, { userId: a.userId, attachmentId: id }, splitPassages(doc));
    return true;
  });
}
