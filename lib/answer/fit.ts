// Fitting the context of an answer, the same for every way in (the web chat, `/v1/chat/completions`): the memory
// recalled for the question within a budget, and what to fit within after the model server refused a prompt as too
// long (lib/llm/prompt-limits.ts). The web turn reads its history window beside it; `/v1` sends the client's own
// messages. Together with ./settle.ts, this is the answer core.
import type { ModelConnection } from "@/lib/llm/connection";
import { contextLimit } from "@/lib/llm/client";
import { earlyQueryVector, embedQuery } from "@/lib/llm/embeddings";
import { fitAfterRefusal } from "@/lib/llm/prompt-limits";
import { MESSAGE_VECTOR_HITS, recall, type Recall, type SemanticQuery } from "@/lib/memory/recall";
import { prescanMessages } from "@/lib/memory/vectors";
import type { Prescan } from "@/lib/memory/kept-vectors";
import type { Db } from "@/lib/db/types";
import { OWN_HEADING_TOKENS } from "@/lib/memory/recall-block";
import { OWN_SHARE } from "@/lib/projects/own-memory";
import type { UserContext } from "@/lib/user-context";

/**
 * A new message's vector started before the turn's first write (`earlyQueryVector`), with the exact search's scan
 * of the kept message vectors in the encoder's worker (`prescanMessages`), leaving out the thread it goes to.
 */
export const earlyQuestionVector = (db: Db, asked: { content: string; threadId?: string }, userId: string) =>
  earlyQueryVector<Prescan>(
    db,
    asked.content,
    userId,
    prescanMessages(db, userId, asked.threadId ?? null, MESSAGE_VECTOR_HITS),
  );
export type EarlyQuestionVector = Awaited<ReturnType<typeof earlyQuestionVector>>;

/** No memory (a temporary chat, no budget left, nothing asked). */
export const nothingRecalled = (): Recall => ({ memories: [], passages: [], tokens: 0 });

/**
 * The memory for one answer: recall in the caller's scope (private memories only for a local model server, set on
 * `u`), the thread being answered left out of the passages, by words and by meaning (the question's vector: one
 * already started, else asked for now with a short timeout; by words alone without it). `own`: a member's own
 * memory in a shared project (lib/projects/own-memory.ts), recalled beside the project's within a share of the
 * budget and marked `mine`, so the block, the uses and the sends keep it apart.
 */
export async function recallForAnswer(
  u: UserContext,
  question: string,
  opts: {
    budget: number;
    threadId: string;
    about?: string | null;
    vector?: SemanticQuery;
    /** The model `vector` comes from, known before it (see recall's `semanticModel`). */
    vectorModel?: string;
    own?: UserContext | null;
  },
): Promise<Recall> {
  if (!question || opts.budget <= 0) return nothingRecalled();
  const semantic = opts.vector ?? embedQuery(u.db, question, u.actorId);
  const ownBudget = opts.own ? Math.floor(opts.budget * OWN_SHARE) : 0;
  const [theirs, mine] = await Promise.all([
    recall(u, question, {
      budget: opts.budget - ownBudget,
      excludeThreadId: opts.threadId,
      about: opts.about,
      semantic,
      semanticModel: opts.vectorModel,
    }),
    opts.own && ownBudget > OWN_HEADING_TOKENS
      ? recall(opts.own, question, {
          budget: ownBudget - OWN_HEADING_TOKENS,
          semantic,
          semanticModel: opts.vectorModel,
        })
      : null,
  ]);
  if (!mine || (!mine.memories.length && !mine.passages.length)) return theirs;
  return {
    ...theirs,
    memories: [...theirs.memories, ...mine.memories.map((m) => ({ ...m, mine: true }))],
    passages: [...theirs.passages, ...mine.passages.map((p) => ({ ...p, mine: true }))],
    tokens: theirs.tokens + mine.tokens + OWN_HEADING_TOKENS,
  };
}

/**
 * After the model server refused a prompt of `sent` tokens: the size to fit the next one within (kept for later
 * prompts to this server and model), or null when the refusal was not about length or asking again cannot help.
 */
export function refitAfterRefusal(e: unknown, conn: ModelConnection, model: string, sent: number): number | null {
  const context = contextLimit(e);
  return context === null ? null : fitAfterRefusal(conn, model, sent, context);
}
