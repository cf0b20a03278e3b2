// Thread titles: the first message's opening words at once, then a short title
// from the memory model after the first exchange (off the hot path).
import type { UserContext } from "@/lib/user-context";
import type { ModelConnection } from "@/lib/llm/connection";
import { openaiClient } from "@/lib/llm/client";
import { metered, meterForThread } from "@/lib/llm/metered";
import { cleanText, cutGraphemes, truncate } from "@/lib/text/policy";
import { withoutReasoning } from "@/lib/llm/model-reply";

/** The title is read from the text's first words: this many characters from the first that is not a space. */
const TITLE_SOURCE_CHARS = 2_000;

export function provisionalTitle(text: string): string {
  // Only the opening is read: collapsing the spaces of a pasted 7 MB document held the server for a quarter second.
  const opening = cutGraphemes(text.slice(Math.max(0, text.search(/\S/))), TITLE_SOURCE_CHARS);
  return truncate(cleanText(opening).replace(/\s+/g, " ").trim(), 60);
}

/** `u`: the thread owner's context. */
export async function generateTitle(
  u: UserContext,
  conn: ModelConnection,
  threadId: string,
  question: string,
  answer: string,
) {
  const { db } = u;
  const meter = await meterForThread(db, threadId);
  if (!meter) return;
  const res = await metered(meter, "model", () =>
    openaiClient(conn, { maxRetries: 0 }).chat.completions.create({
      model: conn.memoryModel,
      messages: [
        {
          role: "system",
          content:
            "Give this conversation a title of at most 6 words. Output only the title, without quotes or a final period.",
        },
        { role: "user", content: `User: ${cutGraphemes(question, 2000)}\n\nAssistant: ${cutGraphemes(answer, 2000)}` },
      ],
    }),
  );
  // Read as far as a title could reach: the trimming below is tried at each of a long run of spaces.
  const raw = cutGraphemes(cleanText(withoutReasoning(res.choices[0]?.message?.content ?? "")), 1000);
  const title = cutGraphemes(raw.replace(/^["'\s]+|["'.\s]+$/g, "").replace(/\s+/g, " "), 80).trim();
  if (title)
    await db.thread.update({
      where: { id: threadId },
      data: { title: u.cipher.seal(title) },
    });
}
