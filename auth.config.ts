// The part of the Auth.js configuration that needs no database: used by the
// proxy (proxy.ts) to send signed-out visitors to sign-in. The full config,
// with providers and the per-request user check, is in auth.ts.
import type { NextAuthConfig } from "next-auth";

const PUBLIC_PATHS = [
  /^\/signin$/,
  /^\/register$/,
  /^\/forgot-password$/,
  /^\/reset-password$/,
  /^\/api\/auth(\/|$)/,
  /^\/api\/health$/,
  /^\/api\/ops$/, // authenticated by the data folder's secret (lib/ops/endpoint.ts), not by a session
];

export const authConfig = {
  pages: { signIn: "/signin" },
  session: { strategy: "jwt" },
  trustHost: true,
  providers: [],
  callbacks: {
    authorized({ auth, request }) {
      const path = request.nextUrl.pathname;
      if (PUBLIC_PATHS.some((p) => p.test(path))) return true;
      if (auth?.user) return true;
      if (path.startsWith("/api/")) return Response.json({ error: "Sign in first." }, { status: 401 });
      return false; // -> redirect to pages.signIn with a callbackUrl
    },
    // Exposes the user id and role from the JWT (no database read here).
    session({ session, token }) {
      if (session.user) {
        (session.user as { id?: string }).id = token.sub as string;
        (session.user as { role?: unknown }).role = token.role;
        (session.user as { sid?: unknown }).sid = token.sid;
        (session.user as { authAt?: unknown }).authAt = token.authAt;
      }
      return session;
    },
  },
} satisfies NextAuthConfig;
