// The one rule for whether a signed session may still act, in its two forms:
// - `sessionOutlivesPasswordChange` + `activeUser` (lib/auth), run by auth.ts on
//   every request that reads the session through Auth.js;
// - `sessionMayActSql`, the same rule folded into the chat's first write, so the
//   hot path (lib/auth/jwt-session.ts) pays no extra round trip for it.
// A session may act when its user exists and is enabled, has chosen their own
// password (no temporary one pending), the session was not signed out, and it
// began after the last password change (or is the session that made it).
import type { Db } from "@/lib/db/client";
import { Prisma } from "@/lib/generated/prisma/client";
import { SessionEndedError, TemporaryPasswordError } from "@/lib/errors";

/** What a signed token proves: its session id and when its user signed in (ms since the epoch). */
export type SessionProof = { sid: string; authAt: number };

/**
 * SQL that is true when the session may act; the arguments are typed SQL expressions (parameters with casts).
 * `temporaryPasswordOk` leaves out the temporary-password condition (to tell the two refusals apart).
 */
export function sessionMayActSql(
  userId: Prisma.Sql,
  sid: Prisma.Sql,
  authAt: Prisma.Sql,
  temporaryPasswordOk = false,
): Prisma.Sql {
  return Prisma.sql`(EXISTS (SELECT 1 FROM "User" su WHERE su.id = ${userId} AND NOT su.disabled
            ${temporaryPasswordOk ? Prisma.empty : Prisma.sql`AND NOT su."mustChangePassword"`}
            AND (su."passwordChangedAt" IS NULL OR su."passwordSid" = ${sid}
                 OR ${authAt} >= floor(extract(epoch FROM su."passwordChangedAt") * 1000)::bigint))
           AND NOT EXISTS (SELECT 1 FROM "SignedOutSession" so WHERE so.sid = ${sid}))`;
}

/** Throws the error that says why the session may not act (after a folded check refused it), or returns. */
export async function assertSessionMayAct(db: Db, userId: string, proof: SessionProof): Promise<void> {
  const args = [
    Prisma.sql`${userId}::text`,
    Prisma.sql`${proof.sid}::text`,
    Prisma.sql`${proof.authAt}::bigint`,
  ] as const;
  const [row] = await db.$queryRaw<Array<{ ok: boolean; live: boolean }>>`
    SELECT ${sessionMayActSql(...args)} AS ok, ${sessionMayActSql(...args, true)} AS live
  `;
  if (row?.ok) return;
  if (row?.live) throw new TemporaryPasswordError(); // a live session whose only bar is the temporary password
  throw new SessionEndedError();
}
