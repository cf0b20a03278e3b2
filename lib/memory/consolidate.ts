// Consolidation: keeps a user's long-term memory clean over time. One run, for
// one user:
// 1. merges duplicates: equal text at once, near-duplicates by vector
//    (lib/memory/near-duplicates.ts), and pairs the memory model calls "the same";
// 2. settles contradictions by precedence (explicit > manual > verified >
//    inferred, then newer), archiving the loser with a version naming the
//    winner; two memories the user stated themselves are left for the user to
//    decide (both get `conflictWithId`, shown on the dashboard);
// 3. expires low-value memories (learned, never used, low confidence, old) to
//    archived, where they can be restored;
// 4. marks procedures not verified for a while as needing re-validation.
// Candidate pairs: each memory's few most alike memories (rarity-weighted shared
// words, or close vectors); a pair is judged once, when the later-changed of the
// two is processed, so after the first pass a run costs few model calls. Runs
// as the `consolidate` job (one user per job, so several instances never
// consolidate one user at once): after enough new memories, and for everyone
// from `npm run jobs:consolidate`.
import { z } from "zod";
import type { MemorySettings, UserContext } from "@/lib/user-context";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import type { ModelConnection } from "@/lib/llm/connection";
import { anyCase, askMemoryModelJson, validItems } from "@/lib/llm/memory-json";
import { enqueue } from "@/lib/jobs/queue";
import { resolveEmbedder } from "@/lib/llm/embeddings";
import { mentionable, normalizeText, outranks, queryTerms, standing } from "./long-term";
import { modelRetire, type RetireOutcome } from "./writes";
import { archiveWhere } from "./sweeps";
import { markConflict } from "./conflicts";
import { mergeNearDuplicates } from "./near-duplicates";
import { markStaleProcedures } from "./procedures";
import { cosine } from "./vector-scores";
import { isLocalEndpoint, recordSend } from "./disclosure";

export type ConsolidationCounts = {
  merged: number;
  contradictionsSettled: number;
  conflictsForUser: number;
  /** Changes left for the user's approval (review on, or the memory to retire is pinned or theirs). */
  proposedForReview: number;
  expired: number;
  staleProcedures: number;
  pairsJudged: number;
  modelCalls: number;
  /** Pairs were left for a follow-up run (queued). */
  more?: boolean;
};

export const emptyCounts = (): ConsolidationCounts => ({
  merged: 0,
  contradictionsSettled: 0,
  conflictsForUser: 0,
  proposedForReview: 0,
  expired: 0,
  staleProcedures: 0,
  pairsJudged: 0,
  modelCalls: 0,
});

/** Pairs judged per run, at most, and per model call. */
const MAX_PAIRS = 60;
const PAIRS_PER_CALL = 20;
/**
 * Rarity-weighted word overlap or vector similarity below which two memories are
 * not compared; low, because "Lives in Lisbon" / "Lives in Porto" share little,
 * and the cost is bounded by NEIGHBOURS anyway.
 */
const WORD_OVERLAP = 0.15;
const VECTOR_SIMILARITY = 0.75;
/** Each changed memory is judged against at most this many of its most alike memories. */
const NEIGHBOURS = 5;
/** Below this confidence, a learned memory nobody used expires after MNEMO_MEMORY_LOW_VALUE_DAYS. */
const LOW_CONFIDENCE = 0.5;

const verdictSchema = z.object({
  verdicts: validItems(
    z.object({ pair: z.coerce.number().int().min(0), verdict: anyCase(["same", "conflict", "different"]) }),
    PAIRS_PER_CALL,
  ),
});

const JUDGE = `You check a user's long-term memory (statements a chat assistant keeps about its user) for duplicates and contradictions. For each numbered pair, answer:
- "same": both say the same thing (one may be more detailed);
- "conflict": both cannot be true now (two different home cities, a changed preference, a new job);
- "different": both can be true (about different people, things or times).
Be strict: "Sister lives in Porto" and "Brother lives in Porto" are different. Reply with JSON only: {"verdicts":[{"pair":0,"verdict":"same|conflict|different"}, ...]}`;

type Row = {
  id: string;
  text: string;
  kind: string;
  source: "explicit" | "manual" | "inferred";
  updatedAt: Date;
  createdAt: Date;
  verifiedAt: Date | null;
  pinned: boolean;
  /** "Don't mention this": never sent to the memory model. */
  muted?: boolean;
  /** "Private": sent to the memory model only when it runs on this machine (lib/memory/disclosure.ts). */
  private?: boolean;
  /** "Remember this for a week": past this, never sent to a model again. */
  expiresAt?: Date | null;
  embedding: number[] | null;
  embeddingModel: string | null;
  /** Its project (null: general memory). Consolidation never pairs memories of two places. */
  projectId?: string | null;
};

export async function consolidateUser(
  u: UserContext,
  conn: ModelConnection | null,
  now = new Date(),
): Promise<ConsolidationCounts> {
  const { db, userId } = u;
  const counts = emptyCounts();
  const cfg = getConfig().memory.consolidation;
  const user = await db.user.findUnique({ where: { id: userId }, select: { consolidatedAt: true } });
  if (!user) return counts;
  // Paused learning holds for every writer, the operator's `npm run jobs:consolidate` too: nothing changes.
  const settings = await u.settings();
  if (settings.paused) return counts;
  const since = user.consolidatedAt ?? new Date(0);

  await mergeEqualText(u, counts);
  const embedder = await resolveEmbedder(db).catch(() => null);
  // Only an endpoint's vectors judge sameness (the built-in encoder's are for finding: lib/memory/embed.ts).
  if (embedder?.connection) {
    const ids = await db.memory.findMany({
      where: { userId, status: "active", embeddingModel: embedder.model },
      select: { id: true },
    });
    counts.merged += await mergeNearDuplicates(
      u,
      embedder.model,
      ids.map((r) => r.id),
    );
  }
  const judged = conn
    ? await judgePairs(u, conn, since, embedder?.model ?? null, counts, settings)
    : { complete: true, through: null };
  counts.expired += await expireLowValue(db, userId, cfg.lowValueDays, now);
  counts.staleProcedures += await markStaleProcedures(db, cfg.procedureRevalidateDays, userId);
  if (judged.complete) {
    // Stamped at the end: what this run itself changed does not count as new next time.
    await db.user.update({ where: { id: userId }, data: { consolidatedAt: new Date() } });
  } else {
    // More pairs than one run judges: note how far it got and go on in another run.
    await db.user.update({ where: { id: userId }, data: { consolidatedAt: judged.through } });
    await enqueue(db, [
      {
        kind: "consolidate",
        userId,
        payload: { userId },
        dedupeKey: `consolidate:${userId}:after:${judged.through!.toISOString()}`,
      },
    ]);
    counts.more = true;
  }
  return counts;
}

async function activeRows(u: UserContext): Promise<Row[]> {
  const { db, userId } = u;
  const c = u.cipher;
  const rows = await db.$queryRaw<Row[]>`
    SELECT id, text, kind::text AS kind, source::text AS source, "updatedAt", "createdAt", "verifiedAt", pinned, muted, private,
            "expiresAt", embedding, "embeddingModel", "projectId"
     FROM "Memory" WHERE "userId" = ${userId} AND status = 'active' ORDER BY "createdAt"
  `;
  return rows.map((r) => ({
    ...r,
    text: c.open(r.text),
    updatedAt: new Date(r.updatedAt),
    createdAt: new Date(r.createdAt),
    expiresAt: r.expiresAt ? new Date(r.expiresAt) : null,
  }));
}

/**
 * Memories whose text is equal once case and punctuation are ignored (e.g. from imports or edits): one stays, taking
 * the others' pins and marks. Through the gate (lib/memory/writes.ts): nothing while paused, a proposal with review on.
 */
async function mergeEqualText(u: UserContext, counts: ConsolidationCounts): Promise<void> {
  const byText = new Map<string, Row[]>();
  // Equal text in two projects (or a project and general memory) is two memories: each place keeps its own.
  const key = (r: Row) => `${r.projectId ?? ""}\u0000${normalizeText(r.text)}`;
  for (const r of await activeRows(u)) byText.set(key(r), [...(byText.get(key(r)) ?? []), r]);
  for (const group of byText.values()) {
    if (group.length < 2) continue;
    const keep = group.reduce((best, m) => (outranks(m, best) ? m : best));
    for (const drop of group)
      if (drop !== keep)
        tally(
          counts,
          await modelRetire(u, {
            keepId: keep.id,
            dropId: drop.id,
            reason: "Merged into the same memory",
            sameWords: true,
          }),
        );
  }
}

/** Counts what the gate did with one of consolidation's changes. */
function tally(
  counts: ConsolidationCounts,
  r: RetireOutcome,
  settled?: Set<string>,
  dropId?: string,
  contradicts = false,
) {
  if (r === "retired") {
    if (contradicts) counts.contradictionsSettled++;
    else counts.merged++;
    if (settled && dropId) settled.add(dropId);
  } else if (r === "proposed") counts.proposedForReview++;
  else if (r === "conflict") counts.conflictsForUser++;
}

/** Word overlap weighted by rarity: sharing a name or a place counts more than sharing "lives". */
const weightedJaccard = (a: Set<string>, b: Set<string>, idf: Map<string, number>) => {
  let inter = 0;
  let union = 0;
  for (const w of a) {
    if (b.has(w)) inter += idf.get(w)!;
    else union += idf.get(w)!;
  }
  for (const w of b) union += idf.get(w)!;
  return inter / Math.max(1e-9, union);
};

/**
 * When each active memory last changed: added, or its text edited (a pin, a
 * status or a settled conflict is no reason to judge it again).
 */
async function changeTimes(db: Db, userId: string): Promise<Map<string, Date>> {
  const rows = await db.$queryRaw<Array<{ id: string; at: Date }>>`
    SELECT m.id, GREATEST(m."createdAt", COALESCE((SELECT max(v."createdAt") FROM "MemoryVersion" v
                                                    WHERE v."memoryId" = m.id AND v."oldText" IS DISTINCT FROM v."newText"), m."createdAt")) AS at
     FROM "Memory" m WHERE m."userId" = ${userId} AND m.status = 'active'
  `;
  return new Map(rows.map((r) => [r.id, new Date(r.at)]));
}

function similarity(
  a: Row,
  b: Row,
  ta: Set<string>,
  tb: Set<string>,
  idf: Map<string, number>,
  model: string | null,
): number {
  const words = weightedJaccard(ta, tb, idf);
  const vec =
    model &&
    a.embeddingModel === model &&
    b.embeddingModel === model &&
    a.embedding &&
    a.embedding.length === b.embedding?.length
      ? cosine(a.embedding, b.embedding)
      : 0;
  return words >= WORD_OVERLAP || vec >= VECTOR_SIMILARITY ? Math.max(words, vec) : 0;
}

/**
 * The pairs to judge. Each pair is judged when the later-changed of its two
 * memories is processed, so every pair is judged once, and again only after
 * one of them changes. Memories changed after `since` are processed oldest
 * change first, with every earlier-changed memory of the same kind that looks
 * alike; the run stops at a memory boundary once `max` pairs are taken and
 * says how far it got (`through`), where the next run starts.
 */
export function candidatePairs(rows: Row[], at: Map<string, Date>, since: Date, model: string | null, max = MAX_PAIRS) {
  const terms = new Map(rows.map((r) => [r.id, new Set(queryTerms(r.text, 40))]));
  const df = new Map<string, number>();
  for (const t of terms.values()) for (const w of t) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = new Map([...df].map(([w, n]) => [w, Math.log(1 + rows.length / n)]));
  const key = (r: Row) => [at.get(r.id)?.getTime() ?? 0, r.id] as const;
  const before = (a: Row, b: Row) => key(a)[0] < key(b)[0] || (key(a)[0] === key(b)[0] && key(a)[1] < key(b)[1]);
  const order = rows
    .filter((r) => (at.get(r.id)?.getTime() ?? 0) > since.getTime())
    .sort((a, b) => (before(a, b) ? -1 : 1));
  const pairs: Array<[Row, Row, number]> = [];
  let through: Date | null = null;
  for (const x of order) {
    const mine: Array<[Row, Row, number]> = [];
    for (const y of rows) {
      if (y.kind !== x.kind || (y.projectId ?? null) !== (x.projectId ?? null) || !before(y, x)) continue;
      const sim = similarity(x, y, terms.get(x.id)!, terms.get(y.id)!, idf, model);
      if (sim > 0) mine.push([x, y, sim]);
    }
    // Only the closest few: a duplicate or a contradiction is among a memory's nearest neighbours,
    // and look-alikes past them would cost model calls for nothing.
    mine.sort((p, q) => q[2] - p[2]).splice(NEIGHBOURS);
    const xAt = at.get(x.id)!;
    // Memories changed at the same instant go together, so the cursor never splits them.
    if (pairs.length && pairs.length + mine.length > max && !(through && xAt.getTime() === through.getTime()))
      return { pairs, through, complete: false };
    pairs.push(...mine);
    through = xAt;
  }
  return { pairs, through, complete: true };
}

/** Judges this run's share of pairs; returns whether every changed memory was covered (else: how far it got). */
async function judgePairs(
  u: UserContext,
  conn: ModelConnection,
  since: Date,
  model: string | null,
  counts: ConsolidationCounts,
  settings: MemorySettings,
) {
  const { db, userId } = u;
  // A memory the user said not to mention, or whose time ran out, is never sent to the memory model either.
  const local = isLocalEndpoint(conn.baseURL);
  const sendable = (await activeRows(u)).filter(
    (r) => mentionable({ muted: !!r.muted, expiresAt: r.expiresAt ?? null }) && (local || !r.private),
  );
  const { pairs, through, complete } = candidatePairs(sendable, await changeTimes(db, userId), since, model);
  const settled = new Set<string>(); // a memory retired in this run is not judged again
  for (let start = 0; start < pairs.length; start += PAIRS_PER_CALL) {
    const batch = pairs
      .slice(start, start + PAIRS_PER_CALL)
      .filter(([a, b]) => !settled.has(a.id) && !settled.has(b.id));
    if (!batch.length) continue;
    const list = batch
      .map(([a, b], i) => `${i}. A: ${JSON.stringify(a.text)}\n   B: ${JSON.stringify(b.text)}`)
      .join("\n");
    counts.modelCalls++;
    const parsed = await askMemoryModelJson(conn, JUDGE, `Pairs:\n${list}`, verdictSchema, { db, userId });
    await recordSend(db, u.cipher, {
      userId,
      memoryIds: batch.flatMap(([a, b]) => [a.id, b.id]),
      model: conn.memoryModel,
      baseURL: conn.baseURL,
      client: "learning",
    }).catch(() => undefined);
    if (!parsed) continue; // malformed output changes nothing
    for (const v of parsed.verdicts) {
      const pair = batch[v.pair];
      if (!pair || v.verdict === "different") {
        if (pair) counts.pairsJudged++;
        continue;
      }
      counts.pairsJudged++;
      const [a, b] = pair;
      const [keep, drop] = outranks(a, b) ? [a, b] : [b, a];
      const contradicts = v.verdict === "conflict";
      // Two the user stated themselves: only the user can say which is true now.
      const outcome =
        contradicts && standing(a) >= 2 && standing(b) >= 2
          ? (await markConflict(db, userId, a.id, b.id))
            ? "conflict"
            : "refused"
          : await modelRetire(
              u,
              {
                keepId: keep.id,
                dropId: drop.id,
                reason: contradicts
                  ? "Contradicted by a memory that takes precedence"
                  : "Merged into a memory that says the same",
                contradicts,
              },
              settings,
            );
      tally(counts, outcome, settled, drop.id, contradicts);
    }
  }
  return { complete, through };
}

/** Learned memories nobody used, with low confidence, older than `days`: archived (restorable). */
async function expireLowValue(db: Db, userId: string, days: number, now: Date): Promise<number> {
  if (days <= 0) return 0;
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  return archiveWhere(
    db,
    userId,
    {
      status: "active",
      source: "inferred",
      pinned: false,
      confidence: { lt: LOW_CONFIDENCE },
      lastUsedAt: null,
      createdAt: { lt: cutoff },
      uses: { none: { used: true } }, // given to answers that never drew on it: still unused
    },
    `Expired: learned with low confidence and never used in ${days} days`,
  );
}

/** "Tidy up now" on the dashboard: a run for this user soon (one a minute at most). */
export async function consolidateNow(db: Db, userId: string): Promise<void> {
  await enqueue(db, [
    {
      kind: "consolidate",
      userId,
      payload: { userId },
      dedupeKey: `consolidate:${userId}:now:${Math.floor(Date.now() / 60_000)}`,
    },
  ]);
}

/** After learning: once enough memories are new since the last run, queue one for this user. */
export async function consolidateSoon(db: Db, userId: string): Promise<void> {
  // One statement after every learning job; the count stops at the threshold.
  const threshold = getConfig().memory.consolidation.afterNewMemories;
  const [user] = await db.$queryRaw<Array<{ consolidatedAt: Date | null; fresh: number }>>`
    SELECT u."consolidatedAt",
            (SELECT count(*)::int FROM (SELECT 1 FROM "Memory" m
               WHERE m."userId" = u.id AND m."createdAt" > coalesce(u."consolidatedAt", '-infinity') LIMIT ${threshold}) f) AS fresh
     FROM "User" u WHERE u.id = ${userId}
  `;
  if (!user || user.fresh < threshold) return;
  // One queued run per generation: the key changes once a run has happened.
  await enqueue(db, [
    {
      kind: "consolidate",
      userId,
      payload: { userId },
      dedupeKey: `consolidate:${userId}:${user.consolidatedAt?.toISOString() ?? "never"}`,
    },
  ]);
}
