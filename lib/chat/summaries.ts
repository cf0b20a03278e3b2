// Rolling summaries: when turns fall out of the history window, the memory
// model folds them into the branch's summary (a new version each time), after
// the answer. The next turns send the summary in place of those turns.
import { metered, meterForThread } from "@/lib/llm/metered";
import type { UserContext } from "@/lib/user-context";
import { getConfig } from "@/lib/config";
import type { ModelConnection } from "@/lib/llm/connection";
import { openaiClient } from "@/lib/llm/client";
import type { SessionItem } from "@/lib/memory/session";
import { summaryTokens, type SummaryRef } from "./context";
import { cleanText, cutGraphemes } from "@/lib/text/policy";
import { withoutReasoning } from "@/lib/llm/model-reply";

const MAX_SUMMARY_CHARS = 4000;

/** `u`: the thread owner's context. */
export async function refreshSummary(
  u: UserContext,
  conn: ModelConnection,
  threadId: string,
  previous: SummaryRef | null,
  dropped: SessionItem[],
): Promise<void> {
  if (!getConfig().chat.summaries || dropped.length === 0) return;
  const transcript = dropped
    .filter((i) => i.role === "user" || (i.role === "assistant" && i.content))
    .map((i) => `${i.role === "user" ? "User" : "Assistant"}: ${i.content}`)
    .join("\n\n");
  const meter = await meterForThread(u.db, threadId);
  if (!meter) return;
  const res = await metered(meter, "model", () =>
    openaiClient(conn, { maxRetries: 1 }).chat.completions.create({
      model: conn.memoryModel,
      messages: [
        {
          role: "system",
          content:
            "You maintain a running summary of a conversation for an assistant that can no longer see its older messages. Merge the existing summary with the new messages. Keep facts, decisions, names, numbers, open questions and the user's stated preferences. Write plain prose or short bullet points, at most 250 words. Output only the summary.",
        },
        {
          role: "user",
          content: `Existing summary:\n${previous?.content ?? "(none)"}\n\nNew messages to fold in:\n${transcript}`,
        },
      ],
    }),
  );
  const content = cutGraphemes(cleanText(withoutReasoning(res.choices[0]?.message?.content ?? "")), MAX_SUMMARY_CHARS);
  if (!content) return;
  const through = dropped[dropped.length - 1];
  await saveSummary(u, threadId, through, content, conn.memoryModel);
}

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
