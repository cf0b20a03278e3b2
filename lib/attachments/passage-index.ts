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
 * A document of at most this many tokens (about 40 passages) has its passages indexed with the upload itself (a note, a letter, a CV: searchable at once). A longer document is indexed
 * by the sweeper a moment later (one per sweep, every 15 s, on each instance): on the embedded database every statement waits its turn, and a burst of
 * long uploads indexed inline kept other requests waiting past a second.
 */
export const INLINE_TOKENS = 10_000;
/** Rows per insert: a 300-page PDF has about a thousand passages. */
const BATCH = 500;

/** A document's passages as rows: each sealed, with its keyed search tokens. */
export function passageRows(c: ContentCipher, at: { userId: string; attachmentId: string }, passages: Passage[]) {
  return passages.map((p) => ({
    attachmentId: at.attachmentId,
    userId: at.userId,
    position: p.position,
    page: p.page,
    content: c.seal(p.text),
    searchTokens: c.searchTokens(p.text),
  }));
}

/** Writes a document's passages and marks it indexed (inside the caller's transaction). */
export async function indexPassages(
  db: Db,
  c: ContentCipher,
  at: { userId: string; attachmentId: string },
  passages: Passage[],
) {
  const rows = passageRows(c, at, passages);
  for (let i = 0; i < rows.length; i += BATCH)
    await db.attachmentPassage.createMany({ data: rows.slice(i, i + BATCH) });
  await db.attachment.update({ where: { id: at.attachmentId }, data: { passagesIndexed: true } });
}

/** Documents per sweep when indexing those stored before passages were (each one read and split). */
const SWEEP_DOCUMENTS = 1;

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

/**
 * Indexes one document's passages unless they are. The rows are made first and written in one batch with the claim
 * (its flag), so the embedded database's one connection is held only for the writes; a second worker's batch
 * fails on the passages' unique positions and changes nothing.
 */
export async function indexDocument(db: Db, id: string): Promise<boolean> {
  const a = await db.attachment.findFirst({
    where: { id, kind: "document", passagesIndexed: false },
    select: { userId: true, name: true, text: true, tokens: true, pages: true },
  });
  if (!a) return false;
  const c = (await userContext(db, a.userId)).cipher;
  const doc = { ...a, id, name: c.open(a.name), text: a.text === null ? "" : c.open(a.text) };
  const rows = passageRows(c, { userId: a.userId, attachmentId: id }, splitPassages(doc));
  try {
    const [claimed] = await db.$transaction([
      db.attachment.updateMany({ where: { id, passagesIndexed: false }, data: { passagesIndexed: true } }),
      ...Array.from({ length: Math.ceil(rows.length / BATCH) }, (_, i) =>
        db.attachmentPassage.createMany({ data: rows.slice(i * BATCH, (i + 1) * BATCH) }),
      ),
    ]);
    return claimed.count > 0;
  } catch (e) {
    // Indexed by another worker meanwhile: its passages' positions are taken.
    const unique = (e as { code?: string })?.code === "P2002" || /duplicate key|unique constraint/i.test(String(e));
    if (unique) return false;
    throw e;
  }
}
