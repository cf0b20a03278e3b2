// The session from the signed JWT alone, with no database read: for the hot
// chat path, where the "user still exists and is enabled" check is folded into
// the first write (see appendItems' ownerId). Everything else uses auth.ts.
import NextAuth from "next-auth";
import { authConfig } from "@/auth.config";
import { getConfig } from "@/lib/config";

const { auth } = NextAuth(() => ({ ...authConfig, secret: getConfig().authSecret }));

export async function jwtUser(): Promise<{ id: string; role: "USER" | "ADMIN"; sid?: string } | null> {
  const s = await auth();
  const u = s?.user as { id?: string; role?: "USER" | "ADMIN"; sid?: string } | undefined;
  return u?.id ? { id: u.id, role: u.role ?? "USER", sid: u.sid } : null;
}
