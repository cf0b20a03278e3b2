// The session from the signed JWT alone, with no database read: for the hot
// chat path, where the whole session check (lib/auth/session-check.ts: user
// enabled, not signed out, no password change since, no temporary password) is
// folded into the first write (see appendItems' `session`). Everything else uses auth.ts.
import NextAuth from "next-auth";
import { authConfig } from "@/auth.config";
import { getConfig } from "@/lib/config";
import type { SessionProof } from "./session-check";

const { auth } = NextAuth(() => ({ ...authConfig, secret: getConfig().authSecret }));

export async function jwtUser(): Promise<{ id: string; role: "USER" | "ADMIN"; session: SessionProof } | null> {
  const s = await auth();
  const u = s?.user as { id?: string; role?: "USER" | "ADMIN"; sid?: string; authAt?: number } | undefined;
  if (!u?.id) return null;
  // A token without a session id or sign-in time proves nothing newer than any password change: "" and 0.
  const session = { sid: typeof u.sid === "string" ? u.sid : "", authAt: typeof u.authAt === "number" ? u.authAt : 0 };
  return { id: u.id, role: u.role ?? "USER", session };
}
