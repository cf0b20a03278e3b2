// Settling an answer: the bookkeeping after the model has answered a user, the same for every way in (the web chat,
// `/v1/chat/completions`, and whatever answers a user later). One home for each record, so the paths cannot drift:
//  - uses: which recalled memories the answer was given and which it drew on (lib/memory/attribution.ts);
//  - sends: which memories left the box, to which model server (lib/memory/disclosure.ts);
//  - usage: the turn, its model calls and tokens, metered like every model call (lib/llm/metered.ts);
//  - the work after it, on the durable queue: title, summary, learning, vectors.
// tests/architecture.test.ts checks that nothing else records uses, sends for an answer, or an answer's usage.
import { meterAnswer } from "@/lib/llm/metered";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { enqueue, type NewJob } from "@/lib/jobs/queue";
import type { ModelConnection } from "@/lib/llm/connection";
import { embeddingsOn } from "@/lib/llm/embeddings";
import { attributeMemories } from "@/lib/memory/attribution";
import { recordSend } from "@/lib/memory/disclosure";
import type { Recall } from "@/lib/memory/recall";
import { actorContext } from "@/lib/projects/own-memory";
import { inSharedProject, type UserContext } from "@/lib/user-context";

/** A memory as an answer's "used" / "also given" lists show it; `mine`: a shared project member's own. */
export type MemoryShown = { id: string; text: string; mine?: boolean };
export type MemoryUses = { memoriesUsed: MemoryShown[]; alsoGiven: MemoryShown[] };

/** Which way in answered: the ledger and "what left the box" say so. */
export type AnswerClient = { client: "web" } | { client: "api"; apiKeyId: string };

/** What an answer cost and sent, however it ended. */
export type AnswerCharge = AnswerClient & {
  conn: ModelConnection;
  model: string;
  /** Every memory that went out in this answer's prompts (a prompt asked again after a refusal counts too). */
  sentMemoryIds: string[];
  modelCalls: number;
  tokens: number;
};

/** A complete answer, stored. */
export type SettledAnswer = AnswerCharge & {
  threadId: string;
  userItemId: string | null;
  answerId: string;
  question: string;
  /** The answer's text as the model wrote it (citations included: attribution reads them). */
  answerText: string;
  recalled: Recall | null;
  /** Long-term memory may learn from this exchange: not a temporary chat, not paused, the caller may write memory. */
  learn: boolean;
  /** Long-term memory was part of this exchange at all (a temporary chat: no vectors either). */
  useMemory: boolean;
  firstExchange?: boolean;
  /** The history budget the answer's window was read with, when turns fell out of it (a summary is due). */
  summarize?: number | null;
};

/** The memories the answer drew on (read from its text), and the rest it was given. */
export function memoryUses(answer: string, question: string, recalled: Recall | null): MemoryUses {
  // With the day each was filed under, when the prompt gave days: an answer naming one drew on its memories.
  const given = (recalled?.memories ?? []).map((m) => ({ id: m.id, text: m.text, since: m.since, mine: m.mine }));
  if (!given.length) return { memoriesUsed: [], alsoGiven: [] }; // nothing to read a pasted book for
  const used = new Set(attributeMemories(answer, question, given));
  const shown = (m: MemoryShown) => ({ id: m.id, text: m.text, ...(m.mine ? { mine: true } : {}) });
  return {
    memoriesUsed: given.filter((m) => used.has(m.id)).map(shown),
    alsoGiven: given.filter((m) => !used.has(m.id)).map(shown),
  };
}

/**
 * Records the memories given to the model with an answer, and which of them the answer drew on (`used`, by
 * default all). Only a used memory counts a use (`useCount`, `lastUsedAt`): the profile's order, expiry of
 * unused memories, ratings and procedure checks follow what answers drew on, not what they were given.
 */
export async function recordUses(
  db: Db,
  userId: string,
  itemId: string,
  given: string[],
  used: string[] = given,
): Promise<void> {
  await db.$executeRaw`
    WITH added AS (
       INSERT INTO "MemoryUse" ("itemId", "memoryId", "userId", used)
       SELECT ${itemId}, m.id, ${userId}, m.id = ANY(${used}::text[]) FROM "Memory" m WHERE m.id = ANY(${given}::text[]) AND m."userId" = ${userId}
       ON CONFLICT DO NOTHING RETURNING "memoryId", used
     )
     UPDATE "Memory" SET "lastUsedAt" = ${new Date()}, "useCount" = "useCount" + 1
     WHERE id IN (SELECT "memoryId" FROM added WHERE used)
  `;
}

/**
 * The memories an answer sent, by whose account records them: the rows' owner, and in a shared project the member's
 * own memories (lib/projects/own-memory.ts) on the member's account, never listed on the project's.
 */
async function sendsByOwner(u: UserContext, ids: string[]): Promise<Array<[UserContext, string[]]>> {
  if (!ids.length || !inSharedProject(u)) return [[u, ids]];
  const rows = await u.db.memory.findMany({ where: { id: { in: ids }, userId: u.actorId }, select: { id: true } });
  const actor = rows.length ? await actorContext(u) : null;
  if (!actor) return [[u, ids]];
  const mine = new Set(rows.map((m) => m.id));
  return [
    [u, ids.filter((id) => !mine.has(id))],
    [actor, [...mine]],
  ];
}

const logBrief = (what: string, e: unknown) =>
  console.error(`[mnemo] ${what}: ${(e as Error).message.split("\n").slice(-1)[0]}`);

/**
 * What left the box and what the model was asked, however the answer ended (complete, stopped, failed). Failures here
 * are logged, never the answer's: the user already has it.
 */
export async function chargeAnswer(u: UserContext, a: AnswerCharge): Promise<void> {
  if (!a.modelCalls) return;
  const record = (owner: UserContext, memoryIds: string[]) =>
    recordSend(owner.db, owner.cipher, {
      userId: owner.userId,
      memoryIds,
      model: a.model,
      baseURL: a.conn.baseURL,
      client: a.client,
      ...(a.client === "api" ? { apiKeyId: a.apiKeyId } : {}),
    });
  await sendsByOwner(u, a.sentMemoryIds)
    .then((parts) => Promise.all(parts.map(([owner, ids]) => record(owner, ids))))
    .catch((e) => logBrief("what left the box", e));
  // The answer counts against the person who asked (in a shared project, the member, not the project).
  await meterAnswer({ db: u.db, userId: u.actorId }, { modelCalls: a.modelCalls, tokens: a.tokens });
}

/** The queued work after a complete answer: title (first exchange), summary, learning, the exchange's vectors. */
export function afterAnswerJobs(u: UserContext, a: SettledAnswer): NewJob[] {
  const { userId } = u;
  const jobs: NewJob[] = [];
  const ids = { threadId: a.threadId, userItemId: a.userItemId, answerItemId: a.answerId };
  if (a.firstExchange) jobs.push({ kind: "title", userId, payload: ids, dedupeKey: `title:${a.threadId}` });
  if (a.summarize != null && getConfig().chat.summaries)
    jobs.push({
      kind: "summary",
      userId,
      payload: { threadId: a.threadId, leafId: a.answerId, budget: a.summarize },
      dedupeKey: `summary:${a.answerId}`,
    });
  if (a.learn && a.userItemId)
    jobs.push({ kind: "extract", userId, payload: { userId, ...ids }, dedupeKey: `extract:${a.answerId}` });
  jobs.push(...vectorJobs(u, a));
  return jobs;
}

/** The exchange's vectors, for recall by meaning in later threads: only when something makes vectors. */
function vectorJobs(u: UserContext, a: { useMemory: boolean; conn: ModelConnection; answerId: string }): NewJob[] {
  if (!a.useMemory || !embeddingsOn(a.conn)) return [];
  return [{ kind: "embed", userId: u.userId, payload: { userId: u.userId }, dedupeKey: `embed:${a.answerId}` }];
}

/**
 * An answer that failed or was stopped: the user's question still gets its vector (it is kept, and searched like
 * any message), so nothing waits for one forever.
 */
export async function settleUnfinished(
  u: UserContext,
  a: { useMemory: boolean; conn: ModelConnection; answerId: string },
): Promise<void> {
  await enqueue(u.db, vectorJobs(u, a)).catch((e) => logBrief(`could not queue vectors after ${a.answerId}`, e));
}

/**
 * A complete answer's bookkeeping, in this order: uses, the queued work (before the answer is reported done, so a
 * process killed now still learns from it on restart), then the charge. Returns which memories it used.
 */
export async function settleAnswer(u: UserContext, a: SettledAnswer): Promise<MemoryUses> {
  const uses = memoryUses(a.answerText, a.question, a.recalled);
  const given = (a.recalled?.memories ?? []).map((m) => m.id);
  // Each memory's use is recorded on its own account: in a shared project, a member's own memory on theirs.
  for (const owner of new Set([u.userId, u.actorId]))
    if (given.length)
      await recordUses(
        u.db,
        owner,
        a.answerId,
        given,
        uses.memoriesUsed.map((m) => m.id),
      );
  await enqueue(u.db, afterAnswerJobs(u, a)).catch((e) =>
    logBrief(`could not queue work after answer ${a.answerId}`, e),
  );
  await chargeAnswer(u, a);
  return uses;
}
