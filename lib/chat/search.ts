// Searching everything the user ever said (and was answered), by content, not
// only by title: the sidebar's message search. It uses the same per-user
// full-text index as recall (with encryption at rest, the keyed search tokens),
// so it works on sealed messages without reading them all; only the page of
// hits is decrypted, for its snippet. Newest first, a page at a time.
import { z } from "zod";
import { inSharedProject, type UserContext } from "@/lib/user-context";
import { sharedProjectContexts } from "@/lib/projects/access";
import { indexWords, SEARCH_CHARS } from "@/lib/crypto/content";
import { queryTerms } from "@/lib/memory/long-term";
import { FORMS, MEANT, splitWord, withWordForms } from "@/lib/memory/word-forms";
import { respellings } from "@/lib/memory/spelling";
import { Prisma } from "@/lib/generated/prisma/client";

export const searchMessagesInput = z.object({
  q: z.string().trim().min(1).max(200),
  /** true: only conversations imported from another app; false: only Mnemo's own. */
  imported: z.boolean().optional(),
  /** A project's id: only its chats; "none": only chats in no project. */
  project: z.string().trim().max(64).optional(),
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
  /** Set when the words were found in a document sent with the message (the snippet is from its passage). */
  file?: { name: string; page: number | null };
};

type Row = {
  id: string;
  threadId: string;
  role: "user" | "assistant";
  content: string;
  createdAt: Date;
  title: string | null;
  imported: boolean;
  /** A passage's hit: its document's name (sealed) and page. */
  fileName?: string;
  page?: number | null;
};

/** Characters of context shown either side of the first match. */
const AROUND = 70;

/**
 * `forModel`: the hits go to a model (an MCP client's search), so what "forget me" covered is left out, as recall
 * leaves it out (each thread's `recallFrom`); the user's own search still finds it. The person's own search (not a
 * model's) also finds the chats of the shared projects they are in (not another member's private chat), each searched
 * with its project's key: the pages are merged newest first, and one cursor pages through them all.
 */
export async function searchMessages(
  u: UserContext,
  input: z.input<typeof searchMessagesInput>,
  opts: { forModel?: boolean } = {},
) {
  const parsed = searchMessagesInput.parse(input);
  const { project, limit } = parsed;
  // Each word with its irregular forms and, misspelled, its likely corrections, as recall searches it: "bought" finds
  // "buy", "children" finds "child", "recieved" finds "received" (the page says which words it also searched for).
  const plain = queryTerms(parsed.q);
  const places = opts.forModel || inSharedProject(u) ? [u] : await searchPlaces(u, project);
  const respelled = await correctionsToSearch(places, await respellings(parsed.q, plain));
  const words = withWordForms(plain, respelled);
  const found = await Promise.all(places.map((place) => searchIn(place, parsed, words, !!opts.forModel)));
  const rows = found
    .flatMap((r) => r)
    .sort((a, b) => b.at.getTime() - a.at.getTime() || (a.hit.itemId < b.hit.itemId ? 1 : -1));
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    hits: page.map((r) => r.hit),
    nextCursor: rows.length > limit && last ? `${last.at.toISOString()}|${last.hit.itemId}` : null,
    /** The words searched for besides a misspelled one: `{ word: "recieved", also: ["received"] }`. */
    respelled: [...respelled].map(([word, also]) => ({ word, also })),
  };
}

/**
 * The corrections the search uses, as its queries do (mnemo_term_query): a word a model wrote in an answer or a
 * document is a word, whatever the dictionary says ("venmo" is then not also searched as "venom", nor "iphone" as
 * "phone"), though still as two words when it splits ("road trip"); one only the person typed may be their habit of a
 * typo ("recieved"), still searched as what it was likely meant to be. One statement per place where the search looks,
 * and only when a word was taken for a typo.
 */
async function correctionsToSearch(
  places: UserContext[],
  respelled: Map<string, string[]>,
): Promise<Map<string, string[]>> {
  if (!respelled.size) return respelled;
  const typed = [...respelled.keys()];
  const written = await Promise.all(places.map((place) => modelWrote(place, typed)));
  // A word split in two is searched whoever wrote it (withWordForms).
  return new Map(
    [...respelled].flatMap(([word, also], i) => {
      const kept = written.some((w) => w[i]) ? also.filter(splitWord) : also;
      return kept.length ? [[word, kept] as const] : [];
    }),
  );
}

/** Whether the place's answers or documents hold each word (mnemo_model_wrote: the rule the queries follow). */
async function modelWrote(u: UserContext, words: string[]): Promise<boolean[]> {
  const { config, terms } = u.cipher.searchTerms(words);
  // Each word is one term here (a plain word of letters): its stem, or its keyed token.
  const rows = await u.db.$queryRaw<Array<{ i: number }>>`
    SELECT i::int FROM unnest(${terms}::text[]) WITH ORDINALITY AS t(term, i)
    WHERE mnemo_model_wrote(${u.userId}, ${config}::regconfig, term)`;
  const at = new Set(rows.map((r) => terms[r.i - 1]));
  return words.map((w) => at.has(u.cipher.searchTerms([w]).terms[0]));
}

/** Where the person's search looks: their own chats and each shared project's; `project` narrows it to one. */
async function searchPlaces(u: UserContext, project: string | undefined): Promise<UserContext[]> {
  const shared = project === "none" ? [] : await sharedProjectContexts(u);
  if (project === undefined) return [u, ...shared];
  const one = shared.find((s) => s.scope.projectId === project);
  return one ? [one] : [u];
}

/** One place's newest limit+1 matches past the cursor, decrypted with its key. */
async function searchIn(
  u: UserContext,
  input: z.infer<typeof searchMessagesInput>,
  words: string[],
  forModel: boolean,
): Promise<Array<{ at: Date; hit: MessageHit }>> {
  const { imported, project, cursor, limit } = input;
  const { config, terms } = u.cipher.searchTerms(words);
  if (!terms.length) return [];
  const [afterAt, afterId] = parseCursor(cursor);
  // Every word must match, in one of its forms (mnemo_term_query ORs a term's forms); the index holds only this
  // user's lexemes.
  const query = {
    userId: u.userId,
    actorId: u.actorId,
    config,
    terms,
    imported: imported ?? null,
    project: project === undefined ? null : project === "none" ? "" : project,
    afterAt,
    afterId,
    limit,
    forModel,
  };
  const tsq = await wordQuery(u, query);
  if (!tsq) return [];
  const rows = newestFirst(await newestMatches(u, query, tsq), await documentMatches(u, query, tsq));
  const asked = new Set(indexWords(words.join(" ").replaceAll(FORMS, " ").replaceAll(MEANT, " ")));
  return rows.slice(0, limit + 1).map((r) => ({
    at: r.createdAt,
    hit: {
      itemId: r.id,
      threadId: r.threadId,
      threadTitle: r.title === null ? null : u.cipher.open(r.title),
      role: r.role,
      createdAt: r.createdAt.toISOString(),
      imported: r.imported,
      snippet: snippet(u.cipher.open(r.content), asked),
      ...(r.fileName === undefined ? {} : { file: { name: u.cipher.open(r.fileName), page: r.page ?? null } }),
    },
  }));
}

type Query = {
  userId: string;
  /** Who searches: in a shared project, another member's private chat is not theirs to find. */
  actorId: string;
  config: string;
  /** Each a word and its other forms (U+001E between them): all must match, each in any of its forms. */
  terms: string[];
  imported: boolean | null;
  /** null: any; "": no project; else that project. */
  project: string | null;
  afterAt: Date | null;
  afterId: string | null;
  limit: number;
  forModel: boolean;
};

/** Matches read from the index before deciding how to find the newest: past this, a word is "common". */
const FEW_MATCHES = 1000;
/** The windows of the user's newest messages searched in turn for a common word. */
const WINDOWS = [2_000, 20_000, 200_000];

/** Every word of the search as one tsquery of the user's index entries; null when none is a word the index keeps. */
async function wordQuery(u: UserContext, q: Query): Promise<Prisma.Sql | null> {
  // Built first, on its own: as a constant the planner sees what it matches (inside the queries below, a
  // subquery, it planned common words' searches three times slower).
  const [{ query }] = await u.db.$queryRaw<Array<{ query: string }>>`
    SELECT COALESCE(string_agg('(' || tq::text || ')', ' & '), '') AS query
    FROM unnest(${q.terms}::text[]) AS term, mnemo_term_query(${q.userId}, ${q.config}::regconfig, term) AS tq
    -- A word the index leaves out ("no", "do": stop words) is left out with its forms ("noes", "done").
    WHERE numnode(mnemo_user_query(${q.userId}, ${q.config}::regconfig, split_part(replace(term, ${MEANT}, ${FORMS}), ${FORMS}, 1))) > 0`;
  return query ? Prisma.sql`${query}::tsquery` : null;
}

/**
 * The newest limit+1 messages whose documents' passages match (one hit per message: its first matching passage).
 * Every matching passage is read and sorted: a document's passages are bounded by the person's storage limit.
 */
async function documentMatches(u: UserContext, q: Query, tsq: Prisma.Sql): Promise<Row[]> {
  return u.db.$queryRaw<Row[]>`
    SELECT DISTINCT ON (i."createdAt", i.id) i.id, i."threadId", i.role::text AS role, p.content, i."createdAt",
      t.title, t."importSource" IS NOT NULL AS imported, a.name AS "fileName", p.page
    FROM "AttachmentPassage" p JOIN "Attachment" a ON a.id = p."attachmentId"
      JOIN "Item" i ON i.id = a."itemId" JOIN "Thread" t ON t.id = i."threadId"
    WHERE p.search @@ ${tsq} AND p."userId" = ${q.userId} AND ${filters(q)}
    ORDER BY i."createdAt" DESC, i.id DESC, a."createdAt", a.id, p.position
    LIMIT ${q.limit + 1}::int
  `;
}

/** Messages and documents' hits as one list, newest first, a message once (its own words before its files'). */
function newestFirst(messages: Row[], documents: Row[]): Row[] {
  const seen = new Set(messages.map((r) => r.id));
  return [...messages, ...documents.filter((r) => !seen.has(r.id))].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
}

/**
 * The newest limit+1 matches, at a cost that does not grow with the history. A query with few matches reads them
 * all from the index and sorts them. A common one (more than FEW_MATCHES) would sort thousands: instead the
 * user's newest messages are tested a window at a time (by the userId/createdAt index), and the first window
 * holding limit+1 matches holds the newest ones, since every message outside it is older.
 */
async function newestMatches(u: UserContext, q: Query, tsq: Prisma.Sql): Promise<Row[]> {
  const rows = await u.db.$queryRaw<Array<Row & { total: number }>>`
    WITH m AS MATERIALIZED (SELECT id FROM "Item" WHERE search @@ ${tsq} LIMIT ${FEW_MATCHES}::int)
    SELECT ${columns}, (SELECT count(*) FROM m)::int AS total
    FROM m JOIN "Item" i ON i.id = m.id JOIN "Thread" t ON t.id = i."threadId"
    WHERE ${filters(q)}
    ORDER BY i."createdAt" DESC, i.id DESC LIMIT ${q.limit + 1}::int
  `;
  const total = rows[0]?.total ?? (await matchCount(u, tsq));
  if (total < FEW_MATCHES) return rows;
  for (const window of WINDOWS) {
    const found = await u.db.$queryRaw<Array<Row & { seen: number }>>`
      WITH w AS MATERIALIZED (
        SELECT id FROM "Item"
        WHERE "userId" = ${q.userId}
          AND (${q.afterAt}::timestamp IS NULL OR ("createdAt", id) < (${q.afterAt}::timestamp, ${q.afterId}::text))
        ORDER BY "createdAt" DESC, id DESC LIMIT ${window}::int
      )
      SELECT ${columns}, (SELECT count(*) FROM w)::int AS seen
      FROM w JOIN "Item" i ON i.id = w.id JOIN "Thread" t ON t.id = i."threadId"
      WHERE i.search @@ ${tsq} AND ${filters(q)}
      ORDER BY i."createdAt" DESC, i.id DESC LIMIT ${q.limit + 1}::int
    `;
    // Enough matches, or the window reached the user's first message: these are the newest.
    if (found.length > q.limit || (found[0]?.seen ?? (await windowSize(u, q, window))) < window) return found;
  }
  return u.db.$queryRaw<Row[]>`
    SELECT ${columns} FROM "Item" i JOIN "Thread" t ON t.id = i."threadId"
    WHERE i.search @@ ${tsq} AND ${filters(q)}
    ORDER BY i."createdAt" DESC, i.id DESC LIMIT ${q.limit + 1}::int
  `;
}

const columns = Prisma.sql`i.id, i."threadId", i.role::text AS role, i.content, i."createdAt", t.title,
  t."importSource" IS NOT NULL AS imported`;

/** The user's own non-temporary messages and answers, past the cursor, imported or not as asked. */
const filters = (q: Query) => Prisma.sql`t."userId" = ${q.userId} AND NOT t.temporary
  AND (NOT t.private OR t."authorId" = ${q.actorId})
  AND i.role IN ('user', 'assistant') AND i.status IN ('complete', 'stopped', 'interrupted')
  AND (${q.imported}::boolean IS NULL OR (t."importSource" IS NOT NULL) = ${q.imported}::boolean)
  AND (${q.project}::text IS NULL OR COALESCE(t."projectId", '') = ${q.project}::text)
  AND (${q.afterAt}::timestamp IS NULL OR (i."createdAt", i.id) < (${q.afterAt}::timestamp, ${q.afterId}::text))
  AND (NOT ${q.forModel}::boolean OR i."createdAt" >= COALESCE(t."recallFrom", '-infinity'::timestamp))`;

async function matchCount(u: UserContext, tsq: Prisma.Sql): Promise<number> {
  const [r] = await u.db.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM (SELECT 1 FROM "Item" WHERE search @@ ${tsq} LIMIT ${FEW_MATCHES}::int) x
  `;
  return r.n;
}

async function windowSize(u: UserContext, q: Query, window: number): Promise<number> {
  const [r] = await u.db.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM (
      SELECT 1 FROM "Item" WHERE "userId" = ${q.userId}
        AND (${q.afterAt}::timestamp IS NULL OR ("createdAt", id) < (${q.afterAt}::timestamp, ${q.afterId}::text))
      LIMIT ${window}::int
    ) x
  `;
  return r.n;
}

function parseCursor(cursor: string | undefined): [Date | null, string | null] {
  const [at, id] = cursor?.split("|") ?? [];
  return at && id && !Number.isNaN(Date.parse(at)) ? [new Date(at), id] : [null, null];
}

/**
 * About AROUND characters either side of the first matched word, cut at word boundaries, with every matched
 * word marked (matched as the index matches: stemmed, case-insensitive).
 */
export function snippet(whole: string, asked: Set<string>): SnippetPart[] {
  // The search matched the first SEARCH_CHARS characters (a stored message can be a million): the hit is there.
  const text = whole.length > SEARCH_CHARS ? whole.slice(0, SEARCH_CHARS) : whole;
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
  if (end < flat.length || text !== whole) parts.push({ text: "…", hit: false });
  return parts;
}
