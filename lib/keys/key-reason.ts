// How a memory's version names the API key a change came through: by the key's id. Version reasons are not sealed
// (lib/crypto/sealed-columns.ts) and a key's name is the user's text (sealed with encryption at rest), so the name is
// looked up only when the history is shown, and a key deleted since reads as "a deleted key".
import type { ContentCipher } from "@/lib/crypto/content";
import type { Db } from "@/lib/db/client";

export const keyReason = (prefix: string, keyId: string) => `${prefix} (api key ${keyId})`;

const KEY_IN_REASON = / \(api key ([\w-]+)\)/g;

/** The reasons as the user reads them: each key named by its name now. */
export async function withKeyNames(db: Db, userId: string, cipher: ContentCipher, reasons: string[]) {
  const ids = [...new Set(reasons.flatMap((r) => [...r.matchAll(KEY_IN_REASON)].map((m) => m[1])))];
  if (!ids.length) return reasons;
  const keys = await db.apiKey.findMany({ where: { userId, id: { in: ids } }, select: { id: true, name: true } });
  const names = new Map(keys.map((k) => [k.id, cipher.open(k.name)]));
  return reasons.map((r) =>
    r.replace(KEY_IN_REASON, (_whole, id: string) =>
      names.has(id) ? ` (key “${names.get(id)}”)` : " (a deleted key)",
    ),
  );
}
