// Rolling summaries: when turns fall out of the history window, the memory
// model folds them into the branch's summary (a new version each time), after
// the answer. The next turns send the summary in place of those turns.
import { metered, meterForThread, type Meter } from "@/lib/llm/metered";
import type { UserContext } from "@/lib/user-context";
import { getConfig } from "@/lib/config";
import type { ModelConnection } from "@/lib/llm/connection";
import { openaiClient } from "@/lib/llm/client";
import type { SessionItem } from "@/lib/memory/session";
import { summaryTokens, type SummaryRef } from "./context";
import { cleanText, cutGraphemes } from "@/lib/text/policy";
import { withoutReasoning } from "@/lib/llm/model-reply";
import { callWithinLimit, cutToTokens, isTooLong, knownPromptLimit } from "@/lib/llm/prompt-limits";
import { countTokens, estimateTokens } from "@/lib/memory/tokens";

const MAX_SUMMARY_CHARS = 4000;
const INSTRUCTIONS =
  "You maintain a running summary of a conversation for an assistant that can no longer see its older messages. Merge the existing summary with the new messages. Keep facts, decisions, names, numbers, open questions and the user's stated preferences. Write plain prose or short bullet points, at most 250 words. Output only the summary.";
/**
 * At most this much of the transcript is folded in by one call: a long backlog (a continued import) goes in pieces,
 * each merged into the summary so far, and each within what the memory model's server reads (lib/llm/prompt-limits).
 */
const PIECE_TOKENS = 6_000;
/** What a piece leaves for the instructions, the labels and the answer, besides the summary so far. */
const PIECE_OVERHEAD = countTokens(INSTRUCTIONS) + 100;
/** How many times a piece that was too long is split again before the refresh gives up (it runs again later). */
const MAX_RESPLITS = 3;

/** `u`: the thread owner's context. */
export async function refreshSummary(
  u: UserContext,
  conn: ModelConnection,
  threadId: string,
  previous: SummaryRef | null,
  dropped: SessionItem[],
): Promise<void> {
  if (!getConfig().chat.summaries || dropped.length === 0) return;
  const lines = dropped
    .filter((i) => i.role === "user" || (i.role === "assistant" && i.content))
    .map((i) => `${i.role === "user" ? "User" : "Assistant"}: ${i.content}`);
  const meter = await meterForThread(u.db, threadId);
  if (!meter) return;
  const summary = await foldSummary(conn, meter, previous?.content ?? null, lines);
  if (!summary) return;
  const through = dropped[dropped.length - 1];
  await saveSummary(u, threadId, through, summary, conn.memoryModel);
}

/**
 * `summary` with the transcript `lines` folded in by the memory model, a piece at a time within what its server reads;
 * null when nothing could be summarised (the server reads too little, or kept refusing).
 */
export async function foldSummary(
  conn: ModelConnection,
  meter: Meter,
  summary: string | null,
  lines: string[],
): Promise<string | null> {
  let rest = lines;
  for (let resplits = 0; rest.length;) {
    const limit = knownPromptLimit(conn, conn.memoryModel);
    const room = (limit ?? Infinity) - PIECE_OVERHEAD - (summary ? countTokens(summary) : 0);
    const piece = firstPiece(rest, Math.min(PIECE_TOKENS, room));
    if (!piece) return null; // the server reads too little to summarise anything
    const messages = [
      { role: "system" as const, content: INSTRUCTIONS },
      {
        role: "user" as const,
        content: `Existing summary:\n${summary ?? "(none)"}\n\nNew messages to fold in:\n${piece.text}`,
      },
    ];
    const res = await callWithinLimit(conn, conn.memoryModel, messages, () =>
      metered(meter, "model", () =>
        openaiClient(conn, { maxRetries: 1 }).chat.completions.create({ model: conn.memoryModel, messages }),
      ),
    );
    if (isTooLong(res)) {
      if (++resplits > MAX_RESPLITS) return null;
      continue; // split again within what the server turned out to read
    }
    summary = cutGraphemes(cleanText(withoutReasoning(res.choices[0]?.message?.content ?? "")), MAX_SUMMARY_CHARS);
    if (!summary) return null;
    rest = rest.slice(piece.lines);
  }
  return summary;
}

/** The transcript lines that fit `tokens` (one alone cut to fit when it is longer); null when nothing can. */
function firstPiece(lines: string[], tokens: number): { text: string; lines: number } | null {
  if (tokens < MIN_PIECE_TOKENS) return null;
  let used = 0;
  let n = 0;
  // Estimated: a line can be a pasted document of megabytes, and counting one exactly held the server for 0.4 s.
  for (let next = 0; n < lines.length && used + (next = estimateTokens(lines[n])) <= tokens; n++) used += next;
  if (n === 0) return { text: cutToTokens(lines[0], tokens), lines: 1 };
  return { text: lines.slice(0, n).join("\n\n"), lines: n };
}
const MIN_PIECE_TOKENS = 200;

/** Stores a new summary version covering the branch through `through`. */
export async function saveSummary(
  u: UserContext,
  threadId: string,
  through: { id: string; position: number },
  content: string,
  model: string | null,
) {
  const { db, cipher: c } = u;
  // Versions count up per thread; a concurrent refresh losing the race on the
  // unique (threadId, version) simply leaves the other's summary in place.
  const last = await db.summary.findFirst({
    where: { threadId },
    orderBy: { version: "desc" },
    select: { version: true },
  });
  await db.summary
    .create({
      data: {
        threadId,
        throughItemId: through.id,
        throughPosition: through.position,
        version: (last?.version ?? 0) + 1,
        content: c.seal(content),
        tokens: summaryTokens(content),
        model,
      },
    })
    .catch((e: { code?: string }) => {
      if (e.code !== "P2002") throw e;
    });
}
