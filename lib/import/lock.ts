// One import per user at a time, across every instance: an import holds a row in AppSetting (`import:<userId>`) that
// it renews while it reads, and removes when it ends. A second import meanwhile is refused at once with a clear
// sentence; a row left by a crashed instance counts as free once it has not been renewed for LEASE_MS. Several
// imports of one user at once each buffered their own file's side files and learning (a memory and load risk), and
// their duplicates raced.
import crypto from "node:crypto";
import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/errors";

const LEASE_MS = 5 * 60_000;
const RENEW_MS = 30_000;

export const IMPORT_RUNNING = "An import is already running for your account: wait for it to finish, then try again.";

/** Runs `fn` holding the user's import lease, or refuses (409) when another import of theirs holds it. */
export async function withImportLock<T>(db: Db, userId: string, fn: () => Promise<T>): Promise<T> {
  const key = `import:${userId}`;
  const token = crypto.randomUUID();
  const value = JSON.stringify({ token });
  const stale = new Date(Date.now() - LEASE_MS);
  const taken = await db.$queryRaw<Array<{ key: string }>>`
    INSERT INTO "AppSetting" (key, value, "updatedAt") VALUES (${key}, ${value}::jsonb, now())
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, "updatedAt" = now()
     WHERE "AppSetting"."updatedAt" < ${stale}
    RETURNING key
  `;
  if (!taken.length) throw new AppError(IMPORT_RUNNING, 409);
  const renew = setInterval(() => {
    void db.$executeRaw`UPDATE "AppSetting" SET "updatedAt" = now() WHERE key = ${key} AND value->>'token' = ${token}`.catch(
      () => undefined,
    );
  }, RENEW_MS);
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await db.$executeRaw`DELETE FROM "AppSetting" WHERE key = ${key} AND value->>'token' = ${token}`.catch(
      () => undefined,
    );
  }
}
