// Memories that know when they were true. When a newer fact replaces an older
// one ("lives in Lisbon" → "lives in Porto"), the older is not hidden: it is
// kept as a *past* memory, closed at the time it stopped being true
// (`validUntil`) and linked to the memory that replaced it (`supersededById`).
// Recall leaves past memories out unless the question is about the past ("last
// year", "before I moved", a date); the dashboard shows each memory's timeline.
//
// Three things close a memory: an extraction or a tool's UPDATE that says the
// world changed (not one that only adds detail or fixes a mistake), settling a
// conflict in favour of the newer memory, and consolidation dropping an older
// memory that a stronger, newer one contradicts.
import type { UserContext } from "@/lib/user-context";
import type { Memory } from "@/lib/generated/prisma/client";
import { indexWords } from "@/lib/crypto/content";
import type { Db } from "@/lib/db/types";
import { questionDates, type DateRange } from "./dates";
import { memoryScopeSql } from "@/lib/projects/scope";

type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

/** When a memory became true: its own `validFrom`, else when it was learned. */
export const validSince = (m: Pick<Memory, "validFrom" | "createdAt">): Date => m.validFrom ?? m.createdAt;

/** The day (UTC, as passages are dated) a memory is said to have begun, in the prompt and the tools' results. */
export const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

/**
 * Keeps `current`'s text (as stored, sealed) as a past memory, true from when `current` became true until `until`,
 * replaced by `current.id` (which now holds the newer text). Part of the caller's transaction.
 */
export async function closeAsPast(
  tx: Tx,
  current: Memory,
  sealed: { text: string; searchTokens: string | null },
  until: Date,
  reason: string,
): Promise<Memory> {
  return tx.memory.create({
    data: {
      userId: current.userId,
      projectId: current.projectId,
      text: sealed.text,
      searchTokens: sealed.searchTokens,
      kind: current.kind,
      source: current.source,
      status: "past",
      confidence: current.confidence,
      // The user's marks hold for the old text too: "don't mention this", "private: never sent off this machine".
      muted: current.muted,
      private: current.private,
      sourceThreadId: current.sourceThreadId,
      sourceItemId: current.sourceItemId,
      sourceRef: current.sourceRef,
      tokens: current.tokens,
      validFrom: validSince(current),
      validUntil: until,
      supersededById: current.id,
      createdAt: current.createdAt,
      versions: {
        create: { userId: current.userId, oldText: null, newText: sealed.text, actor: "model", reason },
      },
    },
  });
}

// Words and phrases that ask about an earlier time than now.
const PAST_CUE =
  /\b(used to|before|previous(ly)?|former(ly)?|earlier|back (then|when|in)|ago|last (year|month|week|summer|winter|spring|autumn|fall|time)|(in|during|since) (19|20)\d\d|when did i|where did i|what did i|did i (use|live|work|have|own|study)|what (was|were) my|where (was|were) (i|my)|who (was|were) my|in the past|originally|at the time|in those days|which .* did i|until|no longer|any ?more|still)\b/i;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
// "before May", "before March 2024", "until June": everything up to that month's start.
const BEFORE_MONTH =
  /\b(?:before|until|till|prior to)\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?:,?\s+((?:19|20)\d\d))?\b/gi;
// "in May" with no year: the last May that has begun.
const IN_MONTH =
  /\b(?:in|during)\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b(?!\.?,?\s+(?:19|20)\d\d)/gi;

/** The year of the last `month` (0-11) that has begun by `now`. */
const lastYearOf = (month: number, now: Date) =>
  month <= now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() - 1;

/** Whether the question is about the past, and the earlier dates it names (empty: no date, only a cue). */
export function pastQuestion(question: string, now = new Date()): { about: boolean; ranges: DateRange[] } {
  const ranges = questionDates(question, now, { present: false }).filter((r) => r.start < now);
  for (const m of question.matchAll(BEFORE_MONTH)) {
    const month = MONTHS.indexOf(m[1].toLowerCase());
    const year = m[2] ? Number(m[2]) : lastYearOf(month, now);
    ranges.push({ start: new Date(0), end: new Date(Date.UTC(year, month, 1)) });
  }
  for (const m of question.matchAll(IN_MONTH)) {
    const month = MONTHS.indexOf(m[1].toLowerCase());
    const year = lastYearOf(month, now);
    ranges.push({ start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) });
  }
  return { about: ranges.length > 0 || PAST_CUE.test(question), ranges };
}

export type PastMemory = {
  id: string;
  text: string;
  kind: Memory["kind"];
  pinned: boolean;
  sourceRef: string | null;
  needsRevalidation: boolean;
  tokens: number;
  validFrom: Date;
  validUntil: Date;
};

/** How many of the user's newest past memories are read and ranked (past facts are few next to current ones). */
const PAST_ROWS = 200;

/**
 * The user's past memories for a question about the past, most relevant first: the question's words they share
 * (stemmed), then overlap with a date the question names, then the most recently closed.
 */
export async function pastMemories(u: UserContext, question: string, ranges: DateRange[]): Promise<PastMemory[]> {
  const rows = await u.db.$queryRaw<Array<PastMemory & { validFrom: Date | null; createdAt: Date }>>`
    SELECT id, text, kind::text AS kind, pinned, "sourceRef", "needsRevalidation", tokens,
           "validFrom", "validUntil", "createdAt"
    FROM "Memory"
    WHERE "userId" = ${u.userId} AND ${memoryScopeSql(u.scope)} AND status = 'past' AND NOT muted AND "validUntil" IS NOT NULL
    ORDER BY "validUntil" DESC LIMIT ${PAST_ROWS}::int
  `;
  const asked = new Set(indexWords(question));
  const scored = rows.map((r) => {
    const m: PastMemory = { ...r, text: u.cipher.open(r.text), validFrom: r.validFrom ?? r.createdAt };
    const shared = new Set(indexWords(m.text).filter((w) => asked.has(w))).size;
    const inRange = ranges.some((d) => m.validFrom < d.end && m.validUntil > d.start);
    return { m, score: shared + (inRange ? 2 : 0) };
  });
  return scored
    .filter((s) => s.score > 0 || !asked.size)
    .sort((a, b) => b.score - a.score || b.m.validUntil.getTime() - a.m.validUntil.getTime())
    .map((s) => s.m);
}

const MONTH_YEAR = new Intl.DateTimeFormat("en", { month: "long", year: "numeric", timeZone: "UTC" });

/** True since a month before it was learned (learned from old or imported history): its start says something. */
export function trueBeforeLearned(m: { validFrom: Date | null; createdAt: Date }): boolean {
  return (
    !!m.validFrom && m.validFrom < m.createdAt && MONTH_YEAR.format(m.validFrom) !== MONTH_YEAR.format(m.createdAt)
  );
}

/** "from March 2021 until June 2025": how a past memory's span reads in the prompt and on the dashboard. */
export function spanText(m: { validFrom: Date; validUntil: Date | null }): string {
  const from = MONTH_YEAR.format(m.validFrom);
  if (!m.validUntil) return `since ${from}`;
  const until = MONTH_YEAR.format(m.validUntil);
  return from === until ? `until ${until}` : `from ${from} until ${until}`;
}
