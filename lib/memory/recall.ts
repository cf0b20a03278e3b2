// What long-term memory puts in front of the model for one message: the memory profile (all memories when they fit the
// budget, else the core set), the memories most relevant to the message, and relevant passages from the user's earlier
// threads (cross-thread recall), within a token budget. Relevance is hybrid: word matches (BM25-like, with a bonus for
// dates the question names) fused with the nearest vectors when an embedding model is set (lib/memory/vectors.ts), so
// a question finds what it shares no word with. It goes into the prompt as one delimited data block (see memoryBlock).
import type { UserContext } from "@/lib/user-context";
import { indexWords } from "@/lib/crypto/content";
import { countTokens } from "./tokens";
import { excerpt } from "./excerpt";
import { asksAboutTime, asksOnlyWhen, questionDates } from "./dates";
import { queryTerms, searchableQuestion, searchMemories } from "./long-term";
import { loadProfile, MEMORY_LINE_OVERHEAD, profileSelection } from "./profile";
import { nearestToQuestion, type QuestionVector } from "./vectors";
import { turnStep } from "@/lib/ops/turn-timeline";
import { aboutOthers } from "./subjects";
import type { VectorHit } from "./vector-scores";
import { dayOf, pastMemories, pastQuestion, type PastMemory } from "./validity";
import { aboutTokens } from "./about";
import { withWordForms } from "./word-forms";
import { respellings } from "./spelling";
// What callers read of recall: the block and its types, and the passage helpers the tests and benches use.
export {
  escapeLine,
  memoryBlock,
  MEMORY_BLOCK_CLOSE,
  MEMORY_BLOCK_OPEN,
  type Passage,
  type Recall,
  type RecalledMemory,
} from "./recall-block";
export { lineCaps, passageWordBonus, type Hit, type Neighbor } from "./recall-passages";
import {
  HEADING_TOKENS,
  DAY_HEADING_TOKENS,
  PAST_HEADING_KEY,
  PAST_SUFFIX_TOKENS,
  passageText,
  type RecalledMemory,
  type Passage,
  type Recall,
  type MemoryCandidate,
} from "./recall-block";
import {
  recencyShare,
  MOST,
  textTokens,
  LABEL_TOKENS,
  HEADER_TOKENS,
  wordWeights,
  passageWordBonus,
  passageVectorBonus,
  matchedShare,
  memoryCost,
  MIN_FILL_TOKENS,
  groupBy,
  lineCaps,
  toPassage,
  recentExchanges,
  datedExchanges,
  loadMissingMemories,
  passagesAround,
  searchPassages,
  type Neighbor,
  type RecentRow,
  type Hit,
} from "./recall-passages";

/** The question's embedding (null: the endpoint failed or timed out; recall goes on by words). */
export type SemanticQuery = QuestionVector;

/** Past memories (lib/memory/validity.ts): at most this share of the budget, their heading, their span's cost. */
const PAST_SHARE = 0.2;
/** The summary of all memories may take up to this share of the budget. */
const ABOUT_SHARE = 0.3;

/** How many candidates each search contributes. */
const CANDIDATES = 40;
/** Messages the search by meaning asks for: more than it uses, as the thread filters may drop some. */
export const MESSAGE_VECTOR_HITS = CANDIDATES * 3;
/**
 * Word-search hits read with their neighbours: about as many passages as the
 * budget could hold (a passage of five short messages costs ~50 tokens), at
 * most CANDIDATES. More are read, decoded and thrown away.
 */
const PASSAGE_TOKENS = 50;
/**
 * Memories searched, by words and by meaning alike: about as many as the budget could hold (a memory line costs ~20
 * tokens), at least CANDIDATES, at most MAX_MEMORY_HITS. A fixed 40 left a large budget to passages when more memories
 * were relevant (the questions whose answer is a list: "What activities does she do?").
 */
const MEMORY_TOKENS = 20;
const MAX_MEMORY_HITS = 150;
const memoryHits = (budget: number) =>
  Math.max(CANDIDATES, Math.min(MAX_MEMORY_HITS, Math.ceil(budget / MEMORY_TOKENS)));
const passageHits = (budget: number) => Math.max(4, Math.min(CANDIDATES, Math.ceil(budget / PASSAGE_TOKENS)));
/**
 * Fusion: a candidate's score is its word-match score plus its vector score, each an absolute measure on 0..1, so
 * both lists count, a match on both wins, and neither list's best is lifted to 1 when it is weak. The word-match
 * score is the share of the question's weight (in the memories, or in the messages) a candidate matches, divided by
 * the best of either list only when that passes 1 (BM25's length normalisation can). The vector score is how far the
 * candidate's similarity stands above the least similar of the neighbours fetched (the background any text reaches),
 * as a share of the way to a perfect match. Scaling each list to its own best (or scoring vectors by rank) gave the
 * nearest vector, however unremarkable, as much weight as a passage holding every word of the question, and at small
 * budgets such guesses crowded out the word matches: hybrid lost to its own word half (#55).
 */
export const vectorScores = (vector: VectorHit[], floor = backgroundOf(vector)): number[] =>
  vector.map((v) => Math.max(0, (v.score - floor) / (1 - floor || 1)));
/** The background of a list of neighbours: its least similar (none for a lone one). */
export const backgroundOf = (vector: VectorHit[]): number =>
  vector.length > 1 ? Math.min(...vector.map((v) => v.score)) : 0;
/** What a neighbour close in meaning adds to its passage: half its vector score (see passageVectorBonus). */
export const NEIGHBOUR_SHARE = 0.5;
/**
 * What a memory about someone the question does not ask about keeps of its relevance ("Tim is reading a fantasy
 * book" for "What books has John read?"): half, so it still goes in when nothing better does (stop 59: a quarter and
 * a half measured, docs/benchmarks.md).
 */
const OTHERS_WEIGHT = 0.5;
/** A vector hit from a date the question names gets what the word-match date bonus gives. */
const VECTOR_DATE_BONUS = 0.5;
/**
 * How much a candidate's cost in tokens counts against its relevance (relevance / tokens^COST_WEIGHT). At 0.5 (the
 * square root) a cheap, loosely related memory went before a passage holding the answer at small budgets; 0.35
 * found more at 500 tokens, about as many at 1,000, 2,000 and 4,000 (docs/benchmarks.md, stop 51: 0.25 and 0.65
 * were measured too).
 */
const COST_WEIGHT = 0.35;
/** What a candidate is worth per the tokens it costs: recall takes candidates in this order (see COST_WEIGHT). */
export const valuePerCost = (relevance: number, tokens: number) => relevance / Math.max(1, tokens) ** COST_WEIGHT;

/** Each neighbour's vector score (see vectorScores), by id. */
const scoredByMeaning = (vector: VectorHit[], floor = backgroundOf(vector)) =>
  new Map(vectorScores(vector, floor).map((score, i) => [vector[i].id, score]));

function fuse(
  lexical: Array<{ key: string; rank: number }>,
  vector: Iterable<readonly [string, number]>,
  top: number,
): Map<string, number> {
  const out = new Map<string, number>();
  const scale = Math.max(1, top);
  for (const l of lexical) out.set(l.key, l.rank / scale);
  for (const [id, score] of vector) out.set(id, (out.get(id) ?? 0) + score);
  return out;
}

export async function recall(
  u: UserContext,
  question: string,
  opts: {
    budget: number;
    excludeThreadId?: string;
    passages?: boolean;
    neighbors?: number;
    semantic?: SemanticQuery;
    /** The model `semantic` will come from, when known before its vector: the exact search's reads go out at once. */
    semanticModel?: string;
    /** "What Mnemo knows about you" (lib/memory/about.ts): given when the memories do not all fit. */
    about?: string | null;
  },
): Promise<Recall> {
  const { db, userId } = u;
  const message = searchableQuestion(question);
  const budget = opts.budget;
  // Two messages either side of a hit: the question it answers, the answer it got.
  const n = opts.neighbors ?? 2;
  const wantPassages = opts.passages !== false;
  const dates = questionDates(message, new Date(), { yearless: true });
  // A question about a time, not a topic ("What did we talk about yesterday?"): what was said then comes first.
  const aboutDays = wantPassages && asksOnlyWhen(message, new Date(), { yearless: true });
  // Each word with its irregular forms ("go" finds "went") and, misspelled, its likely corrections ("funraiser"
  // finds "fundraiser"), for both searches and for what the question asks.
  const plainWords = queryTerms(message);
  const words = withWordForms(plainWords, await respellings(message, plainWords));
  const c = u.cipher;
  const aboutPast = pastQuestion(message);
  // A question about time gets each memory's day (a line per day shown); others spend the budget on more memories.
  const dated = aboutPast.about || dates.length > 0 || asksAboutTime(message);
  // The memories found by meaning that were read with the batch (see guessMemories in ./vectors.ts).
  const guessed = new Map<string, MemoryCandidate>();
  const guessedIds = new Set<string>();
  // The vector searches start as soon as the question's vector is there, while the word searches still run.
  const nearest = nearestToQuestion(db, userId, opts.semantic ?? Promise.resolve(null), {
    model: opts.semanticModel,
    memories: memoryHits(budget),
    messages: wantPassages ? MESSAGE_VECTOR_HITS : 0,
    excludeThreadId: opts.excludeThreadId,
    // As many passages as the word search reads (about what the budget holds): the neighbours of more hits were read
    // and thrown away (#55: 470 rows read for 190 kept, on LoCoMo), and their read is on the turn's critical path.
    reach: { scope: u.scope, n, limit: passageHits(budget) },
    readGuessed: (ids) => {
      ids.forEach((id) => guessedIds.add(id));
      return loadMissingMemories(u, ids, guessed);
    },
  });
  const [profile, relevant, lexRows, [vecMemories, vecMessages], recent, past, said] = await Promise.all([
    // Enough rows for a budget full of short memories; more than that never all fit.
    loadProfile(u, Math.max(50, Math.ceil(budget / 6)), budget),
    searchMemories(u, message, memoryHits(budget)),
    wantPassages
      ? searchPassages(db, userId, u.scope, c.searchTerms(words), opts.excludeThreadId, passageHits(budget), n, dates)
      : Promise.resolve([]),
    nearest,
    // Fetched with the rest (one cheap query) so filling unused budget adds no round trip.
    wantPassages
      ? recentExchanges(db, userId, u.scope, opts.excludeThreadId, budget)
      : Promise.resolve([] as RecentRow[]),
    // Past memories only for a question about the past, read beside the rest (no extra round trip in sequence).
    aboutPast.about ? pastMemories(u, message, aboutPast.ranges) : Promise.resolve([] as PastMemory[]),
    aboutDays ? datedExchanges(db, userId, u.scope, opts.excludeThreadId, budget, dates) : ([] as Neighbor[]),
  ]);

  // Passages: lexical hits with their neighbours, plus the vector hits' neighbours (same filters).
  const lexHitIds = new Set(lexRows.map((r) => r.hit));
  // The vector hits' neighbours and the memories found only by vector, read together (one wait, not two).
  const memById = new Map<string, MemoryCandidate>(relevant.map((m) => [m.id, m]));
  for (const m of [...profile.memories, ...guessed.values()]) if (!memById.has(m.id)) memById.set(m.id, m);
  // pgvector's search read them with the hits; a word hit's own rows are those of the word search.
  const [vecRows] = await Promise.all([
    vecMessages.rows
      ? vecMessages.rows.filter((r) => !lexHitIds.has(r.hit))
      : passagesAround(
          db,
          userId,
          u.scope,
          vecMessages.hits.filter((h) => !lexHitIds.has(h.id)),
          opts.excludeThreadId,
          n,
          passageHits(budget),
        ),
    loadMissingMemories(
      u,
      vecMemories.map((v) => v.id).filter((id) => !memById.has(id) && !guessedIds.has(id)),
      memById,
    ),
  ]);
  turnStep("recall reads");
  const rows = [...lexRows, ...vecRows];
  if (c.enabled) {
    for (const r of [...rows, ...recent, ...said])
      Object.assign(r, { content: c.open(r.content), title: r.title === null ? null : c.open(r.title) });
  }
  const hits = new Map<string, Hit>();
  const lexicalHits: Array<{ key: string; rank: number }> = [];
  for (const r of rows) {
    let h = hits.get(r.hit);
    if (!h) {
      h = { threadId: r.threadId, position: r.hitPosition, at: new Date(r.hitAt), rows: [] };
      hits.set(r.hit, h);
      if (lexHitIds.has(r.hit)) lexicalHits.push({ key: r.hit, rank: r.rank });
    }
    h.rows.push(r);
  }
  // Vector hits in another (excluded, temporary, forgotten) thread found no rows: they drop out here.
  const vectorHits = vecMessages.hits.filter((v) => hits.has(v.id));
  // Both lists' word matches on one scale (see fuse): shares of the question, over the best of either past 1.
  const top = Math.max(...lexicalHits.map((h) => h.rank), ...relevant.map((m) => m.rank), 1e-9);
  // The background is that of the first CANDIDATES found, read or not: fewer read (a small budget) must not raise it.
  const background = backgroundOf(vecMessages.hits.slice(0, CANDIDATES));
  // Every message the search by meaning found (read as a hit or not) on that scale, for the passages holding it too.
  const near = scoredByMeaning(vecMessages.hits, background);
  const hitScores = fuse(
    lexicalHits,
    vectorHits.map((v) => [v.id, near.get(v.id)!] as const),
    top,
  );
  const asked = new Set(indexWords(plainWords.join(" ")));
  // A passage goes in whole, so the question's words its neighbours hold count too (see passageWordBonus).
  for (const [key, bonus] of passageWordBonus(asked, hits)) {
    const score = hitScores.get(key);
    if (score !== undefined) hitScores.set(key, score * (1 + bonus));
  }
  for (const [key, bonus] of passageVectorBonus(hits, near)) {
    const score = hitScores.get(key);
    if (score !== undefined) hitScores.set(key, score + NEIGHBOUR_SHARE * bonus);
  }
  const inDates = (d: Date) => dates.some((r) => d >= r.start && d < r.end);
  for (const v of vectorHits)
    if (!lexHitIds.has(v.id) && inDates(hits.get(v.id)!.at))
      hitScores.set(v.id, hitScores.get(v.id)! + VECTOR_DATE_BONUS);

  const memScores = fuse(
    relevant.map((m) => ({ key: m.id, rank: m.rank })),
    scoredByMeaning(vecMemories.filter((v) => memById.has(v.id))),
    top,
  );
  // A memory about someone the question does not ask about matched by a coincidence of words (lib/memory/subjects.ts).
  const memIds = [...memScores.keys()];
  const memTexts = memIds.map((id) => memById.get(id)!.text);
  for (const i of aboutOthers(message, memTexts)) memScores.set(memIds[i], memScores.get(memIds[i])! * OTHERS_WEIGHT);

  let tokens = 0;
  const memories: RecalledMemory[] = [];
  const passages: Passage[] = [];
  const seen = new Set<string>();
  const usedItems = new Set<string>();
  const kinds = new Set<string>();
  const pastBudget = Math.floor(budget * PAST_SHARE);
  /**
   * Takes a memory when it fits the budget (a past one: its share of it, under its own heading, its span
   * costing a few tokens more). Returns whether it was taken.
   */
  const takeMemory = (m: MemoryCandidate & Pick<RecalledMemory, "validFrom" | "validUntil">, past = false) => {
    if (seen.has(m.id) || budget - tokens <= MEMORY_LINE_OVERHEAD) return false;
    const heading = past ? PAST_HEADING_KEY : m.kind;
    const day = dated && !past && m.since ? `${heading} ${dayOf(m.since)}` : null;
    // The stored count (kept on every text change) spares the tokenizer; rows without one are counted here.
    const cost =
      memoryCost(m) +
      (past ? PAST_SUFFIX_TOKENS : 0) +
      (kinds.has(heading) ? 0 : HEADING_TOKENS) +
      (day && !kinds.has(day) ? DAY_HEADING_TOKENS : 0);
    if (tokens + cost > (past ? pastBudget : budget)) return false;
    seen.add(m.id);
    kinds.add(heading);
    if (day) kinds.add(day);
    memories.push({
      id: m.id,
      text: m.text,
      kind: m.kind,
      pinned: m.pinned,
      sourceRef: m.sourceRef,
      needsRevalidation: m.needsRevalidation,
      ...(past ? { validFrom: m.validFrom, validUntil: m.validUntil } : day ? { since: m.since } : {}),
    });
    tokens += cost;
    return true;
  };
  // A long message shows as an excerpt: the hit's own message up to `caps.hit` tokens, its neighbours and the
  // recent exchanges up to `caps.context` (lib/memory/excerpt.ts).
  const caps = lineCaps(budget);
  const capOf = (h: Hit | null, r: Neighbor) =>
    h && r.position === h.position && r.threadId === h.threadId ? caps.hit : caps.context;
  // What a message's line costs as shown: its text's tokens up to the cap (the role label aside).
  const shownTokens = (h: Hit | null, r: Neighbor) => Math.min(textTokens(r), capOf(h, r));
  const shown = (h: Hit | null) => (r: Neighbor) => excerpt(r.content, textTokens(r), asked, capOf(h, r));
  // A found passage's rows (with the text each shows) and cost, so a later hit next to it can join it.
  const taken = new Map<Passage, { rows: Neighbor[]; text: Map<string, string>; cost: number }>();
  const takePassage = (h: Hit) => {
    showWhole(h);
    const fresh = h.rows.filter((r) => !usedItems.has(r.id)).sort((a, b) => a.position - b.position);
    // The lines' estimated costs are about a floor of the passage's cost: one that cannot fit is never tokenized.
    const floorOf = (rs: Neighbor[]) => rs.reduce((sum, r) => sum + shownTokens(h, r), 0) + HEADER_TOKENS;
    // A passage that does not fit whole goes in narrowed around its hit (nearest neighbours first), rather than
    // not at all: the hit is what matched, its neighbours only context.
    let rows = fresh;
    for (let reach = n - 1; reach >= 0 && rows.length && tokens + floorOf(rows) > budget; reach--)
      rows = fresh.filter((r) => r.threadId !== h.threadId || Math.abs(r.position - h.position) <= reach);
    if (!rows.length || tokens + floorOf(rows) - HEADER_TOKENS > budget) return;
    const text = new Map(rows.map((r) => [r.id, shown(h)(r)]));
    // Rows that continue (or bridge) passages already taken from the thread join them: one passage, one header.
    const joined = adjoining(h.threadId, rows);
    const all = [...joined.flatMap((p) => taken.get(p)!.rows), ...rows].sort((a, b) => a.position - b.position);
    for (const p of joined) for (const [id, t] of taken.get(p)!.text) text.set(id, t);
    const p = toPassage(all, (r) => text.get(r.id)!);
    const cost = countTokens(passageText(p)) + 2;
    const freed = joined.reduce((sum, j) => sum + taken.get(j)!.cost, 0);
    if (tokens - freed + cost > budget) return;
    rows.forEach((r) => usedItems.add(r.id));
    // The joined passage takes the place of the first (most relevant) one it absorbs.
    const at = joined.length ? passages.indexOf(joined[0]) : passages.length;
    passages.splice(at, 0, p);
    for (const j of joined) {
      passages.splice(passages.indexOf(j), 1);
      taken.delete(j);
    }
    taken.set(p, { rows: all, text, cost });
    tokens += cost - freed;
  };
  /**
   * A hit already shown as the context of an earlier passage (a line cut to the context cap) is shown to its own
   * cap there, when the budget allows: found for itself, it is what matched, as it would be had it come first.
   */
  const showWhole = (h: Hit) => {
    const row = h.rows.find((r) => r.threadId === h.threadId && r.position === h.position);
    if (!row || !usedItems.has(row.id)) return;
    for (const [p, t] of taken) {
      const was = t.text.get(row.id);
      if (was === undefined) continue;
      const whole = shown(h)(row);
      if (whole.length <= was.length) return;
      const text = new Map(t.text).set(row.id, whole);
      const q = toPassage(t.rows, (r) => text.get(r.id)!);
      const cost = countTokens(passageText(q)) + 2;
      if (tokens - t.cost + cost > budget) return;
      passages.splice(passages.indexOf(p), 1, q);
      taken.delete(p);
      taken.set(q, { rows: t.rows, text, cost });
      tokens += cost - t.cost;
      return;
    }
  };
  /** Found passages of the thread whose rows touch the span of these (positions next to or inside it). */
  const adjoining = (threadId: string, rows: Neighbor[]): Passage[] => {
    let lo = rows[0].position;
    let hi = rows[rows.length - 1].position;
    const out: Passage[] = [];
    for (let grew = true; grew;) {
      grew = false;
      for (const [p, { rows: pr }] of taken) {
        if (out.includes(p) || p.threadId !== threadId) continue;
        const a = pr[0].position;
        const b = pr[pr.length - 1].position;
        if (a > hi + 1 || b < lo - 1) continue;
        out.push(p);
        [lo, hi, grew] = [Math.min(lo, a), Math.max(hi, b), true];
      }
    }
    return out.sort((x, y) => passages.indexOf(x) - passages.indexOf(y));
  };

  // The profile first (every memory when they fit its share; else pinned, explicit and most used,
  // lib/memory/profile.ts); then memories and passages interleaved by fused relevance per cost fill the rest.
  // A question about the past first gets what was true then, within its share of the budget.
  for (const m of past) if (!takeMemory(m, true)) break;
  const { take, rest, fits } = profileSelection(profile, budget);
  // Past the budget, the summary of every memory stands in for those left out (within the profile's share).
  let about: string | undefined;
  if (!fits && opts.about && tokens + aboutTokens(opts.about) <= budget * ABOUT_SHARE) {
    about = opts.about;
    tokens += aboutTokens(about);
  }
  for (const m of take) takeMemory(m);
  if (aboutDays) fillWith(said, "dated");
  // A passage that matches little of the question (its words weighted by rarity; no date it names, no vector search
  // found it) is a weak guess. When the recent exchanges hold most of the user's searchable history, they are the
  // better bet, so word matches below that share wait until after them (see recencyShare). Only then (short
  // histories, few messages) is anything stemmed. With less, any word match is worth more than a slice of recency.
  const share = recencyShare(budget, recent);
  const vectorIds = new Set(vectorHits.map((v) => v.id));
  const mostlyRecent = share > MOST && share > 1 / Math.max(1, asked.size);
  const weights = mostlyRecent ? wordWeights(asked, [...hits.values()], recent) : null;
  const weak = (key: string) => {
    const h = hits.get(key)!;
    return !!weights && !vectorIds.has(key) && !inDates(h.at) && matchedShare(weights, h) < share;
  };
  // Relevance per the tokens it costs (valuePerCost): of two equally relevant candidates the cheaper goes first (a
  // short memory before a long passage), while a much more relevant one still beats a cheap weak one.
  const memCost = (m: MemoryCandidate) => (m.tokens || Math.ceil(m.text.length / 4)) + MEMORY_LINE_OVERHEAD;
  const hitCost = (h: Hit) => HEADER_TOKENS + h.rows.reduce((sum, r) => sum + shownTokens(h, r) + LABEL_TOKENS, 0);
  const candidates = [
    ...[...memScores].map(([key, score]) => {
      const m = memById.get(key)!;
      return { score: valuePerCost(score, memCost(m)), at: 0, position: 0, weak: false, take: () => takeMemory(m) };
    }),
    ...[...hitScores].map(([key, score]) => {
      const h = hits.get(key)!;
      return {
        score: valuePerCost(score, hitCost(h)),
        at: h.at.getTime(),
        position: h.position,
        weak: weak(key),
        take: () => takePassage(h),
      };
    }),
    // Of two equally good passages the newer goes first (what was said last is likelier current), not whichever
    // the database listed first.
  ].sort((a, b) => b.score - a.score || b.at - a.at || b.position - a.position);
  for (const cand of candidates) if (!cand.weak) cand.take();
  // The rest of the profile (read when it fits the budget) takes what relevance left: memories the user has, before
  // exchanges that merely happened last.
  for (const m of rest) takeMemory(m);
  // Budget relevance left unused is not wasted: the newest exchanges of the user's other recent threads are the
  // likeliest context ("as I said yesterday…"), and they cover what a question words differently.
  if (wantPassages) fillWith(recent, "recent");
  for (const cand of candidates) if (cand.weak) cand.take();
  return { memories, passages, tokens, ...(about ? { about } : {}) };

  /** Exchanges found by when, not relevance (the likeliest first), a passage per thread, while the budget holds. */
  function fillWith(found: Neighbor[], mark: "recent" | "dated") {
    if (budget - tokens < MIN_FILL_TOKENS) return;
    for (const rows of groupBy(found, (r) => r.threadId)) {
      const fresh = rows.filter((r) => !usedItems.has(r.id)); // the likeliest first
      if (!fresh.length || budget - tokens < MIN_FILL_TOKENS) continue;
      // Lines by their stored token counts, then one exact count of the passage (again only if it overshot).
      let n = 0;
      let estimate = HEADER_TOKENS;
      const line = (r: Neighbor) => shownTokens(null, r) + LABEL_TOKENS;
      for (n = 0; n < fresh.length && tokens + estimate + line(fresh[n]) <= budget; n++) estimate += line(fresh[n]);
      if (!n) continue;
      // In the order they were said (recent rows come newest first, dated ones nearest the day named first).
      let kept = fresh.slice(0, n).sort((a, b) => a.position - b.position);
      let best = toPassage(kept, shown(null), mark);
      let cost = countTokens(passageText(best)) + 2;
      while (tokens + cost > budget && kept.length > 1) {
        // Drop the oldest lines the excess is worth, then count again.
        for (let over = tokens + cost - budget; over > 0 && kept.length > 1; kept = kept.slice(1))
          over -= line(kept[0]);
        best = toPassage(kept, shown(null), mark);
        cost = countTokens(passageText(best)) + 2;
      }
      if (tokens + cost > budget) continue;
      best.itemIds.forEach((id) => usedItems.add(id));
      passages.push(best);
      tokens += cost;
    }
  }
}
