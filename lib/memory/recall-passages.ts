// Passages from the user's earlier threads, recall's second source: the reads (word search, vector hits' neighbours,
// recent exchanges) and how a hit's words weigh against the question's. Used by ./recall.ts.
import type { Db } from "@/lib/db/client";
import type { UserContext } from "@/lib/user-context";
import { callFunction } from "@/lib/db/function-calls";
import { indexWords, SEARCH_CHARS } from "@/lib/crypto/content";
import { retentionCutoff } from "@/lib/account/retention";
import { countTokens, MESSAGE_OVERHEAD } from "./tokens";
import { type DateRange } from "./dates";
import { MEMORY_LINE_OVERHEAD } from "./profile";
/** A hit of the search by meaning (lib/memory/vectors.ts). */
type VectorHit = { id: string; score: number };
import { escapeLine, memSuffix, type MemoryCandidate, type Passage } from "./recall-block";
import { memoryScopeParams, scopeParams, type MemoryScope } from "@/lib/projects/scope";

/** A message recall may show; `tokens` is its stored count (the line costs about that much). */
export type Neighbor = {
  id: string;
  threadId: string;
  position: number;
  role: string;
  content: string;
  sourceRef: string | null;
  title: string | null;
  createdAt: Date;
  tokens: number;
};
/** A recent message, with how many messages the user's searchable threads hold. */
export type RecentRow = Neighbor & { historyMessages: number };
export type NeighborRow = Neighbor & { hit: string; hitPosition: number; hitAt: Date; rank: number };
export type Hit = { threadId: string; position: number; at: Date; rows: Neighbor[] };

/**
 * How much of the user's searchable history the recent exchanges can bring
 * (0..1): what fits the budget of them, over the whole history's estimated
 * size. It is the chance that the newest exchanges hold what a question asks,
 * and the bar a word match must reach to go before them: with a short history
 * recency covers most of it, with a long one almost none.
 */
export function recencyShare(budget: number, recent: RecentRow[]): number {
  if (!recent.length) return 0;
  const threads = new Set(recent.map((r) => r.threadId)).size;
  const recentTokens = recent.reduce((s, r) => s + lineTokens(r), threads * HEADER_TOKENS);
  const historyTokens = Math.max(recentTokens, (recent[0].historyMessages * recentTokens) / recent.length);
  return Math.min(budget, recentTokens) / historyTokens;
}
/** "Most" of the history: past this share, recency sets a bar for word matches. */
export const MOST = 0.5;
/** A message's text tokens: its stored count less the chat overhead (counted here only for rows without one). */
export const textTokens = (r: Neighbor) => (r.tokens ? r.tokens - MESSAGE_OVERHEAD : countTokens(r.content));
/** About what a role label ("User: ") and line break add to a passage line. */
export const LABEL_TOKENS = 3;
/** About what a message costs as a whole passage line. */
export const lineTokens = (r: Neighbor) => textTokens(r) + LABEL_TOKENS;
/** About what a passage's first line (date and title) costs. */
export const HEADER_TOKENS = 20;

/** The hit's own message, or undefined when it was not read back. */
export const ownMessage = (h: Hit) => h.rows.find((r) => r.position === h.position);

/**
 * How telling each of the question's words is: BM25's inverse document
 * frequency over the messages at hand (the recent exchanges and the hits),
 * which for the short histories this is used on are most of the history.
 */
export function wordWeights(asked: Set<string>, hits: Hit[], recent: Neighbor[]): WordWeights {
  const texts = new Map<string, string>();
  for (const r of recent) texts.set(r.id, searchedPart(r.content));
  for (const h of hits) {
    const own = ownMessage(h);
    if (own) texts.set(own.id, searchedPart(own.content));
  }
  // Each message stemmed once: the hits' words are looked up again by matchedShare.
  const wordsOf = new Map([...texts].map(([id, text]) => [id, new Set(indexWords(text))]));
  const weights = idfWeights(asked, [...wordsOf.values()]);
  return { weights, total: [...weights.values()].reduce((a, b) => a + b, 0), wordsOf };
}
export type WordWeights = { weights: Map<string, number>; total: number; wordsOf: Map<string, Set<string>> };

/** Each asked word's BM25 inverse document frequency over these documents (each given as its set of words). */
export function idfWeights(asked: Set<string>, docs: Set<string>[]): Map<string, number> {
  return new Map(
    [...asked].map((w) => {
      const d = docs.filter((words) => words.has(w)).length;
      return [w, Math.log(1 + (docs.length - d + 0.5) / (d + 0.5))] as const;
    }),
  );
}

/**
 * Per hit, the share of the question's word weight (wordWeights) that only its neighbours hold: a passage is shown
 * whole, so a question word in the message before or after the hit tells as much about the passage as one in the
 * hit. Relative to the whole question's weight (not to what the hit matched), so a hit that matches little is not
 * lifted past one that matches much. Each message is stemmed once, however many passages share it.
 */
export function passageWordBonus(asked: Set<string>, hits: Map<string, Hit>): Map<string, number> {
  const out = new Map<string, number>();
  if (!asked.size || !hits.size) return out;
  const stems = new Map<string, Set<string>>();
  const wordsOf = (r: Neighbor) => {
    let w = stems.get(r.id);
    if (!w) stems.set(r.id, (w = askedWordsIn(r.content, asked)));
    return w;
  };
  // Each word's weight: BM25's inverse document frequency over the hits' own messages (as wordWeights).
  const own = new Map([...hits].map(([key, h]) => [key, h.rows.find((r) => r.position === h.position)]));
  const ownWords = [...own.values()].map((r) => (r ? wordsOf(r) : new Set<string>()));
  const weights = idfWeights(asked, ownWords);
  const total = [...weights.values()].reduce((a, b) => a + b, 0);
  if (total <= 0) return out;
  for (const [key, h] of hits) {
    const mine = own.get(key);
    const hitWords = mine ? wordsOf(mine) : new Set<string>();
    let extra = 0;
    const counted = new Set<string>();
    for (const r of h.rows)
      if (r !== mine)
        for (const w of wordsOf(r))
          if (!hitWords.has(w) && !counted.has(w)) {
            counted.add(w);
            extra += weights.get(w) ?? 0;
          }
    if (extra > 0) out.set(key, extra / total);
  }
  return out;
}

/**
 * Per hit, the best vector score (0..1, see vectorScores in ./recall.ts) among its neighbours in its own thread: a
 * passage is shown whole, so a neighbour the search by meaning found near the question tells about the passage as its
 * words do (passageWordBonus). Two signals in one passage (a word hit next to a turn close in meaning, or two turns
 * close in meaning side by side) beat either alone. Recall adds half of it (NEIGHBOUR_SHARE): the hit is what
 * matched, a neighbour only context, as a neighbour's line is cut to half the hit's (lineCaps).
 */
export function passageVectorBonus(hits: Map<string, Hit>, scoreOf: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  if (!scoreOf.size) return out;
  for (const [key, h] of hits) {
    let best = 0;
    for (const r of h.rows)
      if (r.id !== key && r.threadId === h.threadId) best = Math.max(best, scoreOf.get(r.id) ?? 0);
    if (best > 0) out.set(key, best);
  }
  return out;
}

/**
 * The question's stems a text holds. Every text is stemmed: with the stems kept (lib/text/stem.ts), that is cheaper
 * than the regular expression that used to pass over texts holding no word starting like one (stop 65).
 */
export function askedWordsIn(whole: string, asked: Set<string>): Set<string> {
  return new Set(indexWords(searchedPart(whole)).filter((w) => asked.has(w)));
}

/**
 * The part of a message its search entry reads (and an excerpt of it shows): a stored message can be a million
 * characters, and stemming a 7 MB one whole held the server for half a second on every recall that met it.
 */
export const searchedPart = (text: string) => (text.length > SEARCH_CHARS ? text.slice(0, SEARCH_CHARS) : text);

/** The share of the question's word weight the hit message itself contains. */
export function matchedShare({ weights, total, wordsOf }: WordWeights, hit: Hit): number {
  const words = wordsOf.get(ownMessage(hit)?.id ?? "");
  if (!words || total <= 0) return 1;
  let matched = 0;
  for (const [w, weight] of weights) if (words.has(w)) matched += weight;
  return matched / total;
}

/**
 * What a memory's line costs: its stored token count (kept on every text change; counted here for rows without
 * one) and the line's overhead, or the escaped line's own count when escaping changed the text or it has a suffix.
 */
export function memoryCost(m: MemoryCandidate): number {
  const escaped = escapeLine(m.text);
  const plain = escaped === m.text && !m.pinned && !m.needsRevalidation;
  if (plain) return (m.tokens || countTokens(m.text)) + MEMORY_LINE_OVERHEAD;
  return countTokens(escaped + memSuffix(m)) + MEMORY_LINE_OVERHEAD;
}

/** Smaller leftovers are not worth a query. */
export const MIN_FILL_TOKENS = 60;
/**
 * How many of the user's most recently active other threads, and how many of each one's newest messages, fill unused
 * budget.
 */
export const RECENT_THREADS = 8;
export const RECENT_MESSAGES = 24;

export function groupBy<T>(rows: T[], key: (r: T) => string): T[][] {
  const m = new Map<string, T[]>();
  for (const r of rows) m.set(key(r), [...(m.get(key(r)) ?? []), r]);
  return [...m.values()];
}

/**
 * How many tokens a passage line may show of its message: the hit's own
 * message gets a quarter of the budget (100 to 500), the messages around it
 * and the recent exchanges half that, so a few long answers cannot take it all.
 */
export function lineCaps(budget: number): { hit: number; context: number } {
  const hit = Math.max(100, Math.min(500, Math.round(budget / 4)));
  return { hit, context: Math.round(hit / 2) };
}

export function toPassage(
  rows: Neighbor[],
  text: (r: Neighbor) => string,
  found: "recent" | "dated" | null = null,
): Passage {
  return {
    itemIds: rows.map((r) => r.id),
    threadId: rows[0].threadId,
    title: rows[0].title,
    date: new Date(rows[0].createdAt),
    lines: rows.map((r) => `${r.role === "user" ? "User" : "Assistant"}: ${escapeLine(text(r))}`),
    sourceRefs: rows.map((r) => r.sourceRef).filter((s): s is string => !!s),
    ...(found ? { [found]: true } : {}),
  };
}

/**
 * The newest finished messages of the user's most recently active other threads (newest first within each; threads by
 * activity).
 */
export async function recentExchanges(
  db: Db,
  userId: string,
  scope: MemoryScope,
  excludeThreadId: string | undefined,
  budget: number,
): Promise<RecentRow[]> {
  return callFunction<RecentRow>(db, {
    // SQL in the migration recall_reads_bounded_by_tokens (PL/pgSQL keeps its plan): each thread's newest
    // messages while those before them show less than the budget (a line shows at most its cap).
    call: `mnemo_recent_exchanges($1, $2, $3::timestamp, $4::int, $5::int, $6::int, $7::int, $8::text, $9::boolean)`,
    params: [
      userId,
      excludeThreadId ?? null,
      retentionCutoff(),
      RECENT_THREADS,
      RECENT_MESSAGES,
      budget,
      lineCaps(budget).context + MESSAGE_OVERHEAD,
      ...scopeParams(scope),
    ],
    dates: ["createdAt"],
  });
}

/** At most this many messages said on the days a question names are read, and no more than the budget could show. */
export const DATED_MESSAGES = 200;
const datedRows = (budget: number) => Math.min(DATED_MESSAGES, Math.ceil(budget / 10));

/**
 * What was said on the days a question names (`dates`), newest first, in the threads recall may read, while those
 * before show less than the budget (SQL: mnemo_dated_exchanges).
 */
export async function datedExchanges(
  db: Db,
  userId: string,
  scope: MemoryScope,
  excludeThreadId: string | undefined,
  budget: number,
  dates: DateRange[],
): Promise<Neighbor[]> {
  return callFunction<Neighbor>(db, {
    call:
      "mnemo_dated_exchanges($1, $2, $3::timestamp, $4::timestamp[], $5::timestamp[], $6::int, $7::int, $8::int, " +
      "$9::text, $10::boolean)",
    params: [
      userId,
      excludeThreadId ?? null,
      retentionCutoff(),
      dates.map((d) => d.start),
      dates.map((d) => d.end),
      datedRows(budget),
      budget,
      lineCaps(budget).context + MESSAGE_OVERHEAD,
      ...scopeParams(scope),
    ],
    dates: ["createdAt"],
  });
}

/** Memories found only by vector, read (and decrypted) by id, the user's own and active only. */
export async function loadMissingMemories(u: UserContext, ids: string[], into: Map<string, MemoryCandidate>) {
  if (!ids.length) return;
  // In the same statement as the vector hits' neighbours when recall reads together (lib/db/function-calls.ts).
  const rows = await callFunction<MemoryCandidate & { since: Date }>(u.db, {
    call: "mnemo_memories_by_id($1, $2::text[], $3::text, $4::boolean, $5::boolean)",
    params: [u.userId, ids, ...memoryScopeParams(u.scope)],
    dates: ["since"],
  });
  for (const r of rows) into.set(r.id, { ...r, text: u.cipher.open(r.text) });
}

/** Vector hits with their neighbours, in one query (hits outside the user's searchable threads yield nothing). */
export async function passagesAround(
  db: Db,
  userId: string,
  scope: MemoryScope,
  hits: VectorHit[],
  excludeThreadId: string | undefined,
  n: number,
  limit: number,
): Promise<NeighborRow[]> {
  if (!hits.length) return [];
  return callFunction<NeighborRow>(db, {
    // SQL in the migration recall_functions: the same filters and neighbours as the word search.
    call: `mnemo_hits_with_neighbours($1, $2, $3::text[], $4::float8[], $5::int, $6::timestamp, $7::text, $8::boolean,
       $9::int)`,
    params: [
      userId,
      excludeThreadId ?? null,
      hits.map((h) => h.id),
      hits.map((h) => h.score),
      n,
      retentionCutoff(),
      ...scopeParams(scope),
      limit,
    ],
    dates: PASSAGE_DATES,
  });
}

/** The best-matching messages from the user's other threads, each with its neighbours, in one query. */
export async function searchPassages(
  db: Db,
  userId: string,
  scope: MemoryScope,
  { config, terms }: { config: string; terms: string[] },
  excludeThreadId: string | undefined,
  limit: number,
  n: number,
  dates: DateRange[],
) {
  if (!terms.length) return [];
  return callFunction<NeighborRow>(db, {
    // Ranked like BM25 (inverse document frequency of each matching word, length
    // normalisation, a bonus for dates the question names), with a flat cost: how
    // common a word is comes from a fixed sample of the newest messages, and only
    // rare words are looked up in the index. SQL and its reasoning: the migration
    // recall_functions (PL/pgSQL keeps its plan).
    call: `mnemo_recall_passages($1, $2, $3::int, $4::int, $5::text[], $6::int, $7::regconfig, $8::timestamp,
       $9::timestamp[], $10::timestamp[], $11::float8, $12::int, $13::int, $14::text, $15::boolean)`,
    params: [
      userId,
      excludeThreadId ?? null,
      limit,
      n,
      terms,
      COMMON_WORD_DOCS,
      config,
      retentionCutoff(),
      dates.map((d) => d.start),
      dates.map((d) => d.end),
      DATE_BONUS,
      SAMPLE_DOCS,
      FETCH_ROWS,
      ...scopeParams(scope),
    ],
    dates: PASSAGE_DATES,
  });
}

/** The timestamp columns of a passage row. */
export const PASSAGE_DATES = ["hitAt", "createdAt"];

/** Messages from a date the question names rank as if they matched one more rare word. */
export const DATE_BONUS = 6;
/** A word in more of the user's messages than this (estimated) is too common to search by. */
export const COMMON_WORD_DOCS = 1000;
/** How many messages (estimated) the index lookup of the rarest words may return: the flat cost's bound. */
export const FETCH_ROWS = 1000;
/** How many of the user's newest messages the estimate of a word's frequency reads. */
export const SAMPLE_DOCS = 500;
