// `npm run keys:rotate`: brings every user's data under the current master key.
//  1. Re-wraps user keys wrapped by the previous master key
//     (MNEMO_ENCRYPTION_KEY_PREVIOUS) under the current one (MNEMO_ENCRYPTION_KEY).
//  2. Encrypts rows still stored in plain text (written before encryption was on).
//  3. With `dataKeys`: gives each user a new data key version and re-encrypts
//     all their rows under it. Old versions stay until no row names them, so an
//     instance still holding an older key in memory keeps writing readable rows.
// Safe to run again: rows already under the newest key are left alone.
import type { Db } from "@/lib/db/client";
import { tableSql, userRowsSql } from "@/lib/account/user-data";
import { Prisma } from "@/lib/generated/prisma/client";
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
import { SEALED_COLUMNS, type SealedColumn } from "./sealed-columns";

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
    let after = "";
    for (;;) {
      const cols = Prisma.join(columns.map((col) => Prisma.raw(`"${col.name}"`)));
      const rows = await db.$queryRaw<Array<Record<string, unknown>>>`
        SELECT id, ${cols} FROM ${tableSql(table)} WHERE (${userRowsSql(table, userId)}) AND id > ${after}
        ORDER BY id LIMIT 500
      `;
      if (!rows.length) break;
      for (const row of rows) {
        const sets = resealedColumns(row, columns, c, c, (stored) => isSealed(stored) && versionOf(stored) === current);
        if (sets.length) {
          await db.$executeRaw`UPDATE ${tableSql(table)} SET ${Prisma.join(sets)} WHERE id = ${row.id}`;
          changed++;
        }
      }
      after = String(rows[rows.length - 1].id);
    }
  }
  return changed;
}

/**
 * The SET clauses that re-seal a row's sealed columns: each value opened with `from` (plain text as it is) and sealed
 * with `to`, its search tokens made again; `keep` leaves a stored value as it is. Key rotation and sharing a project
 * (lib/projects/share-existing.ts) use it.
 */
export function resealedColumns(
  row: Record<string, unknown>,
  columns: SealedColumn[],
  from: ContentCipher,
  to: ContentCipher,
  keep: (stored: string) => boolean = () => false,
): Prisma.Sql[] {
  const sets: Prisma.Sql[] = [];
  for (const col of columns) {
    const raw = row[col.name];
    if (raw === null || raw === undefined) continue;
    const stored = col.json ? (typeof raw === "string" ? raw : JSON.stringify(raw)) : String(raw);
    if (keep(stored)) continue;
    const plain = isSealed(stored) ? from.open(stored) : stored;
    const sealed = to.seal(plain);
    const column = Prisma.raw(`"${col.name}"`);
    sets.push(col.json ? Prisma.sql`${column} = ${JSON.stringify(sealed)}::jsonb` : Prisma.sql`${column} = ${sealed}`);
    if (col.tokens) sets.push(Prisma.sql`${Prisma.raw(`"${col.tokens}"`)} = ${to.searchTokens(plain)}`);
  }
  return sets;
}

async function namesVersion(db: Db, userId: string, version: number): Promise<boolean> {
  const prefix = `enc1:${version}:%`;
  for (const { table, columns } of SEALED) {
    const cond = columns.map((col) => {
      const column = Prisma.raw(`"${col.name}"::text`);
      return Prisma.sql`${column} LIKE ${prefix} OR ${column} LIKE ${`"${prefix}`}`;
    });
    const [r] = await db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM ${tableSql(table)}
      WHERE (${userRowsSql(table, userId)}) AND (${Prisma.join(cond, " OR ")})
    `;
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
