// A user with memories and an earlier chat, for tests of what recall and search find: the earlier chat is followed
// by a longer one of small talk, so the newest exchanges hold little of it and what is found was found by its words.
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { userContext } from "@/lib/user-context";
import { addMemory } from "@/lib/memory/store";
import { appendItems } from "@/lib/memory/session";
import { threadCipher } from "./ciphers";

/** Alternating turns, the user's first. */
const turns = (said: string[]) =>
  said.map((content, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content }));

/** A new user (`email`) with these memories and an earlier chat of these messages, then 200 lines of small talk. */
export async function userWithHistory(db: PrismaClient, email: string, memories: string[], messages: string[]) {
  const user = await db.user.create({ data: { email } });
  const u = await userContext(db, user.id);
  for (const text of memories) await addMemory(u, { text, source: "manual" }, "user", "t");
  const th = await db.thread.create({ data: { userId: user.id, title: "Earlier" } });
  await appendItems(db, th.id, turns(messages), { cipher: await threadCipher(db, th.id) });
  const later = await db.thread.create({ data: { userId: user.id, title: "Chatter" } });
  const chatter = Array.from({ length: 200 }, (_, i) => `Small talk about the weather, part ${i}`);
  await appendItems(db, later.id, turns(chatter), { cipher: await threadCipher(db, later.id) });
  return userContext(db, user.id);
}
