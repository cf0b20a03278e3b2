// `npm run keys:rotate`: brings every user's data under the current master key.
//  1. Re-wraps user keys wrapped by the previous master key
//     (MNEMO_ENCRYPTION_KEY_PREVIOUS) under the current one (MNEMO_ENCRYPTION_KEY).
//  2. Encrypts rows still stored in plain text (written before encryption was on).
//  3. With `dataKeys`: gives each user a new data key version and re-encrypts
//     all their rows under it. Old versions stay until no row names them, so an
//     instance still holding an older key in memory keeps writing readable rows.
// Safe to run again: rows already under the newest key are left alone.
import type { Db } from "@/lib/db/client";
import { USER_DATA } from "@/lib/account/user-data";
import {
  cipherFor,
  forgetCachedKeys,
  isSealed,
  masterKeyId,
  unwrapDataKey,
  wrapDataKey,
  encryptionKeysInUse,
  type ContentCipher,
} from "./content";
import crypto from "node:crypto";
import { SEALED_COLUMNS } from "./sealed-columns";

const SEALED = SEALED_COLUMNS;

export type RotationCounts = {
  usersRewrapped: number;
  newDataKeys: number;
  rowsEncrypted: number;
  oldKeysRemoved: number;
};

const versionOf = (v: string) => Number(v.split(":")[1]);

async function resealUser(db: Db, userId: string, c: ContentCipher, current: number): Promise<number> {
  let changed = 0;
  for (const { table, columns } of SEALED) {
    const where = USER_DATA[table].rows!;
    let after = "";
    for (;;) {
      const rows = await db.$queryRawUnsafe<Array<Record<string, unknown>>>(
        `SELECT id, ${columns.map((col) => `"${col.name}"`).join(", ")} FROM "${table}" WHERE (${where}) AND id > $2 ORDER BY id LIMIT 500`,
        userId,
        after,
      );
      if (!rows.length) break;
      for (const row of rows) {
        const sets: string[] = [];
        const values: unknown[] = [];
        for (const col of columns) {
          const raw = row[col.name];
          if (raw === null || raw === undefined) continue;
          const stored = col.json ? (typeof raw === "string" ? raw : JSON.stringify(raw)) : String(raw);
          if (isSealed(stored) && versionOf(stored) === current) continue;
          const plain = isSealed(stored) ? c.open(stored) : stored;
          const sealed = c.seal(plain);
          values.push(col.json ? JSON.stringify(sealed) : sealed);
          sets.push(`"${col.name}" = $${values.length}${col.json ? "::jsonb" : ""}`);
          if (col.tokens) {
            values.push(c.searchTokens(plain));
            sets.push(`"${col.tokens}" = $${values.length}`);
          }
        }
        if (sets.length) {
          values.push(row.id);
          await db.$executeRawUnsafe(
            `UPDATE "${table}" SET ${sets.join(", ")} WHERE id = $${values.length}`,
            ...values,
          );
          changed++;
        }
      }
      after = String(rows[rows.length - 1].id);
    }
  }
  return changed;
}

async function namesVersion(db: Db, userId: string, version: number): Promise<boolean> {
  const prefix = `enc1:${version}:%`;
  for (const { table, columns } of SEALED) {
    const cond = columns.map((col) => `"${col.name}"::text LIKE $2 OR "${col.name}"::text LIKE $3`).join(" OR ");
    const [r] = await db.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM "${table}" WHERE (${USER_DATA[table].rows}) AND (${cond})`,
      userId,
      prefix,
      `"${prefix}`,
    );
    if (r.n) return true;
  }
  return false;
}

export async function rotateKeys(db: Db, opts: { dataKeys?: boolean } = {}): Promise<RotationCounts> {
  const { key, previousKey } = encryptionKeysInUse();
  if (!key) throw new Error("MNEMO_ENCRYPTION_KEY is not set: there is nothing to rotate to.");
  const counts: RotationCounts = { usersRewrapped: 0, newDataKeys: 0, rowsEncrypted: 0, oldKeysRemoved: 0 };
  const currentId = masterKeyId(key);

  // 1. Re-wrap under the current master key.
  const stale = await db.userKey.findMany({ where: { NOT: { masterKeyId: currentId } } });
  for (const k of stale) {
    if (!previousKey || masterKeyId(previousKey) !== k.masterKeyId) {
      throw new Error(
        `User key ${k.userId}/${k.version} is wrapped by master key ${k.masterKeyId}: set MNEMO_ENCRYPTION_KEY_PREVIOUS to that key.`,
      );
    }
    const w = wrapDataKey(key, k.userId, unwrapDataKey(previousKey, k.userId, k.wrapped));
    await db.userKey.update({ where: { userId_version: { userId: k.userId, version: k.version } }, data: w });
  }
  counts.usersRewrapped = new Set(stale.map((k) => k.userId)).size;
  forgetCachedKeys();

  // 2 and 3, user by user.
  const users = await db.user.findMany({ select: { id: true }, orderBy: { id: "asc" } });
  for (const u of users) {
    if (opts.dataKeys) {
      const last = await db.userKey.findFirst({ where: { userId: u.id }, orderBy: { version: "desc" } });
      if (last) {
        await db.userKey.create({
          data: { userId: u.id, version: last.version + 1, ...wrapDataKey(key, u.id, crypto.randomBytes(32)) },
        });
        counts.newDataKeys++;
        forgetCachedKeys(u.id);
      }
    }
    const c = await cipherFor(db, u.id);
    const current = (await db.userKey.findFirst({ where: { userId: u.id }, orderBy: { version: "desc" } }))!.version;
    counts.rowsEncrypted += await resealUser(db, u.id, c, current);
    // Older key versions go once no stored value names them any more.
    for (const old of await db.userKey.findMany({ where: { userId: u.id, version: { lt: current } } })) {
      if (!(await namesVersion(db, u.id, old.version))) {
        await db.userKey.delete({ where: { userId_version: { userId: u.id, version: old.version } } });
        counts.oldKeysRemoved++;
      }
    }
    forgetCachedKeys(u.id);
  }
  return counts;
}
