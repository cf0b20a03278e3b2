// Thread titles: the first message's opening words at once, then a short title
// from the memory model after the first exchange (off the hot path).
import { cipherForThread } from "@/lib/crypto/content";
import type { Db } from "@/lib/db/client";
import type { ModelConnection } from "@/lib/llm/connection";
import { openaiClient } from "@/lib/llm/client";

export function provisionalTitle(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length > 60 ? `${oneLine.slice(0, 57).trimEnd()}…` : oneLine;
}

export async function generateTitle(db: Db, conn: ModelConnection, threadId: string, question: string, answer: string) {
  const res = await openaiClient(conn, { maxRetries: 0 }).chat.completions.create({
    model: conn.memoryModel,
    messages: [
      { role: "system", content: "Give this conversation a title of at most 6 words. Output only the title, without quotes or a final period." },
      { role: "user", content: `User: ${question.slice(0, 2000)}\n\nAssistant: ${answer.slice(0, 2000)}` },
    ],
    max_tokens: 24,
  });
  const title = res.choices[0]?.message?.content?.replace(/^["'\s]+|["'.\s]+$/g, "").replace(/\s+/g, " ").slice(0, 80);
  if (title) await db.thread.update({ where: { id: threadId }, data: { title: (await cipherForThread(db, threadId)).seal(title) } });
}
