// Searching everything the user ever said (and was answered), by content, not
// only by title: the sidebar's message search. It uses the same per-user
// full-text index as recall (with encryption at rest, the keyed search tokens),
// so it works on sealed messages without reading them all; only the page of
// hits is decrypted, for its snippet. Newest first, a page at a time.
import { z } from "zod";
import type { UserContext } from "@/lib/user-context";
import { indexWords } from "@/lib/crypto/content";
import { queryTerms } from "@/lib/memory/long-term";

export const searchMessagesInput = z.object({
  q: z.string().trim().min(1).max(200),
  /** true: only conversations imported from another app; false: only Mnemo's own. */
  imported: z.boolean().optional(),
  cursor: z.string().max(200).optional(),
  limit: z.number().int().min(1).max(50).default(20),
});

/** A piece of a snippet; `hit` marks a word the search matched (shown highlighted). */
export type SnippetPart = { text: string; hit: boolean };
export type MessageHit = {
  itemId: string;
  threadId: string;
  threadTitle: string | null;
  role: "user" | "assistant";
  createdAt: string;
  imported: boolean;
  snippet: SnippetPart[];
};

type Row = {
  id: string;
  threadId: string;
  role: "user" | "assistant";
  content: string;
  createdAt: Date;
  title: string | null;
  imported: boolean;
};

/** Characters of context shown either side of the first match. */
const AROUND = 70;

export async function searchMessages(u: UserContext, input: z.input<typeof searchMessagesInput>) {
  const { q, imported, cursor, limit } = searchMessagesInput.parse(input);
  const words = queryTerms(q);
  const { config, terms } = u.cipher.searchTerms(words);
  if (!terms.length) return { hits: [] as MessageHit[], nextCursor: null };
  const [afterAt, afterId] = parseCursor(cursor);
  // Every word must match (mnemo_user_query ANDs them); the index holds only this user's lexemes.
  // The matches come from the search index first (MATERIALIZED: never a walk of every message by date that tests
  // each one), then the newest of them are read.
  const rows = await u.db.$queryRaw<Row[]>`
    WITH m AS MATERIALIZED (
      SELECT id FROM "Item" WHERE search @@ mnemo_user_query(${u.userId}, ${config}::regconfig, ${terms.join(" ")})
    )
    SELECT i.id, i."threadId", i.role::text AS role, i.content, i."createdAt", t.title,
           t."importSource" IS NOT NULL AS imported
    FROM m JOIN "Item" i ON i.id = m.id JOIN "Thread" t ON t.id = i."threadId"
    WHERE t."userId" = ${u.userId} AND NOT t.temporary
      AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped', 'interrupted')
      AND (${imported ?? null}::boolean IS NULL OR (t."importSource" IS NOT NULL) = ${imported ?? null}::boolean)
      AND (${afterAt}::timestamp IS NULL OR (i."createdAt", i.id) < (${afterAt}::timestamp, ${afterId}::text))
    ORDER BY i."createdAt" DESC, i.id DESC
    LIMIT ${limit + 1}::int
  `;
  const page = rows.slice(0, limit);
  const asked = new Set(indexWords(words.join(" ")));
  const hits = page.map((r): MessageHit => ({
    itemId: r.id,
    threadId: r.threadId,
    threadTitle: r.title === null ? null : u.cipher.open(r.title),
    role: r.role,
    createdAt: r.createdAt.toISOString(),
    imported: r.imported,
    snippet: snippet(u.cipher.open(r.content), asked),
  }));
  const last = page.at(-1);
  return { hits, nextCursor: rows.length > limit && last ? `${last.createdAt.toISOString()}|${last.id}` : null };
}

function parseCursor(cursor: string | undefined): [Date | null, string | null] {
  const [at, id] = cursor?.split("|") ?? [];
  return at && id && !Number.isNaN(Date.parse(at)) ? [new Date(at), id] : [null, null];
}

/**
 * About AROUND characters either side of the first matched word, cut at word boundaries, with every matched
 * word marked (matched as the index matches: stemmed, case-insensitive).
 */
export function snippet(text: string, asked: Set<string>): SnippetPart[] {
  const flat = text.replace(/\s+/g, " ").trim();
  const tokens = [...flat.matchAll(/[\p{L}\p{N}]+/gu)];
  const isHit = (w: string) => indexWords(w).some((x) => asked.has(x));
  const first = tokens.find((t) => isHit(t[0]));
  const at = first?.index ?? 0;
  let start = Math.max(0, at - AROUND);
  let end = Math.min(flat.length, at + (first?.[0].length ?? 0) + AROUND);
  if (start > 0) start = flat.indexOf(" ", start) + 1 || start;
  if (end < flat.length) end = flat.lastIndexOf(" ", end) > at ? flat.lastIndexOf(" ", end) : end;
  const parts: SnippetPart[] = start > 0 ? [{ text: "…", hit: false }] : [];
  let pos = start;
  for (const t of tokens) {
    const i = t.index!;
    if (i < start || i + t[0].length > end || !isHit(t[0])) continue;
    if (i > pos) parts.push({ text: flat.slice(pos, i), hit: false });
    parts.push({ text: t[0], hit: true });
    pos = i + t[0].length;
  }
  if (pos < end) parts.push({ text: flat.slice(pos, end), hit: false });
  if (end < flat.length) parts.push({ text: "…", hit: false });
  return parts;
}
