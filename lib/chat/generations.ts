// Answers being written: which run in this process (so Stop is immediate here; another instance sees the stop at
// its next flush or lease renewal), stopping one, and saving an answer's final state.
import type { Source } from "@/lib/attachments/prompt";
import { type ContentCipher } from "@/lib/crypto/content";
import type { Db } from "@/lib/db/client";
import { publicItem, type SessionItem } from "@/lib/memory/session";

import { messageTokens } from "@/lib/memory/tokens";
import { ChatGoneError, isDatabaseUnavailable } from "@/lib/errors";
import { continuableThreadWhere } from "@/lib/projects/access";
import { storedMessageText } from "@/lib/chat/stored-message";
import { cleanText } from "@/lib/text/policy";
import { stripCitations } from "@/lib/memory/citation-format";
import {} from "@/lib/llm/prompt-limits";

// Generations running in this process, by answer id, with their owner, so Stop
// is immediate here; on another instance the stop is seen at the next flush or
// lease renewal (status no longer "streaming"), so Stop works whichever
// instance serves the stream.
export const running = new Map<string, { abort: AbortController; userId: string }>();

/**
 * Registers a generation running in this process (runTurn does; the authorization tests watch Stop's effect with it).
 */
export function trackGeneration(itemId: string, userId: string, abort = new AbortController()): AbortController {
  running.set(itemId, { abort, userId });
  return abort;
}
export const untrackGeneration = (itemId: string) => running.delete(itemId);

/** Stops an answer that is being written. Returns false if it is not the user's or not streaming. */
export async function stopTurn(db: Db, userId: string, itemId: string): Promise<boolean> {
  const r = await db.item.updateMany({
    // The user's own answer, or one in a shared project's chat they may continue (lib/projects/access.ts).
    where: { id: itemId, status: "streaming", thread: continuableThreadWhere(userId) },
    data: { status: "stopped" },
  });
  // Ownership first: nothing in this process is touched unless the database said it is this user's answer.
  if (r.count === 0) return false;
  const run = running.get(itemId);
  if (run?.userId === userId) run.abort.abort();
  return true;
}

/**
 * Saves an answer's final state, retrying briefly: a database restart should not leave it streaming. Saved as the
 * user reads it: without the model's memory citations (attribution has read them).
 */
export async function finishRetrying(db: Db, c: ContentCipher, itemId: string, data: Finish): Promise<SessionItem> {
  // What is stored is what the user is shown: a NUL or lone surrogate the model wrote made safe here, not only in
  // the database layer (lib/db/prisma.ts), so the answer the browser gets equals the one a reload shows. An answer
  // is kept as a client's message is (lib/chat/stored-message.ts): whole up to a million characters, then cut.
  if (data.content !== undefined) {
    data = { ...data, content: storedMessageText(cleanText(stripCitations(data.content)), "when stored") };
  }
  for (let attempt = 0; ; attempt++) {
    try {
      return await finish(db, c, itemId, data);
    } catch (e) {
      if (attempt >= 3 || !isDatabaseUnavailable(e)) throw e;
      await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
    }
  }
}

/** An answer's end: its fields, and where its document passages came from (lib/attachments/prompt.ts). */
type Finish = Partial<SessionItem> & { sources?: Source[] };

async function finish(db: Db, c: ContentCipher, itemId: string, data: Finish): Promise<SessionItem> {
  const row = await db.item
    .update({
      where: { id: itemId },
      data: {
        content: data.content !== undefined ? c.seal(data.content) : undefined,
        searchTokens: data.content !== undefined ? c.searchTokens(data.content) : undefined,
        status: data.status,
        error: data.error,
        model: data.model,
        promptTokens: data.promptTokens,
        completionTokens: data.completionTokens,
        tokens: data.content !== undefined ? messageTokens(data.content) : undefined,
        sources: data.sources?.length ? data.sources : undefined,
      },
    })
    .catch((e) => {
      // The thread went while the answer was written: said plainly, not as an internal error.
      if ((e as { code?: string })?.code === "P2025") throw new ChatGoneError();
      throw e;
    });
  return publicItem({
    ...row,
    content: data.content ?? c.open(row.content),
    toolCalls: null,
  } as unknown as SessionItem);
}

const FLUSH_MS = 500;

/** What a reload mid-answer shows: kept as the finished answer will be, whole up to the cap (stored-message.ts). */
const partialText = (snapshot: string) => storedMessageText(stripCitations(snapshot, true), "when stored");

/**
 * Saves the partial answer every FLUSH_MS while it streams, so a reload mid-answer shows what arrived so far. An
 * answer no longer streaming (stopped from another instance) aborts the generation.
 */
export function partialSaver(db: Db, c: ContentCipher, answerId: () => string, abort: AbortController) {
  let lastFlush = Date.now();
  let flushing: Promise<unknown> = Promise.resolve();
  return {
    maybe: (snapshot: string) => {
      if (Date.now() - lastFlush <= FLUSH_MS) return;
      lastFlush = Date.now();
      const id = answerId();
      flushing = flushing.then(async () => {
        const r = await db.item
          .updateMany({ where: { id, status: "streaming" }, data: { content: c.seal(partialText(snapshot)) } })
          .catch(() => ({ count: 1 }));
        if (r.count === 0) abort.abort(); // stopped from another instance
      });
    },
    done: () => flushing,
  };
}
