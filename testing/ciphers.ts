// Tests and scripts that write a thread's messages directly need its owner's cipher, as the app's entry points
// make it (lib/user-context.ts). A thread that does not exist gets the plain cipher (the write then fails as the
// app's would: not found).
import type { Db } from "@/lib/db/types";
import { plainCipher, type ContentCipher } from "@/lib/crypto/content";
import { threadOwnerContext } from "@/lib/user-context";

export async function threadCipher(db: Db, threadId: string): Promise<ContentCipher> {
  return (await threadOwnerContext(db, threadId))?.cipher ?? plainCipher;
}
