// The model connection most tests need: an admin who saved the project's test server as the chat and memory model.
import type { Db } from "@/lib/db/client";
import { clearConnectionCache, saveConnection } from "@/lib/llm/connection";

/** Saves `baseURL` (the test server) as the connection, chat model "mock-chat", memory model "mock-memory". */
export async function connectToMock(db: Db, baseURL: string, tag: string): Promise<string> {
  const admin = await db.user.create({ data: { email: `${tag}-admin@example.com`, role: "ADMIN" } });
  await saveConnection(db, { baseURL, chatModel: "mock-chat", memoryModel: "mock-memory" }, admin.id);
  clearConnectionCache(db);
  return admin.id;
}
