// Auth.js (next-auth v5) with email+password and optional GitHub, Google and
// OIDC sign-in, each switched on by its environment variables alone.
// Sessions are JWTs; every read re-checks that the user exists and is enabled,
// so deleting or disabling a user ends their session on the next request.
import { isDatabaseUnavailable } from "@/lib/errors";
import NextAuth, { CredentialsSignin, type DefaultSession, type NextAuthConfig } from "next-auth";
import type { Provider } from "next-auth/providers";
import Credentials from "next-auth/providers/credentials";
import GitHub from "next-auth/providers/github";
import Google from "next-auth/providers/google";
import { PrismaAdapter } from "@auth/prisma-adapter";
import type { Adapter, AdapterUser } from "next-auth/adapters";
import { authConfig } from "./auth.config";
import { getConfig } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import type { Role } from "@/lib/generated/prisma/client";
import crypto from "node:crypto";
import { activeUser, createUser, recordSignOut, verifyCredentials } from "@/lib/auth/users";
import { sessionOutlivesPasswordChange } from "@/lib/auth/password-change";
import { admitRegistration } from "@/lib/auth/registration";
import { RateLimitedError } from "@/lib/errors";
import { clientIp } from "@/lib/auth/client-ip";

declare module "next-auth" {
  interface Session {
    user: { id: string; role: Role } & DefaultSession["user"];
  }
}

export class RateLimitedSignin extends CredentialsSignin {
  code = "rate_limited";
}

/** The database is unreachable: the form says so instead of "incorrect email or password". */
export class UnavailableSignin extends CredentialsSignin {
  code = "unavailable";
}

export type OAuthProviderInfo = { id: string; name: string };

export function oauthProviders(): OAuthProviderInfo[] {
  const { oauth } = getConfig();
  const list: OAuthProviderInfo[] = [];
  if (oauth.github) list.push({ id: "github", name: "GitHub" });
  if (oauth.google) list.push({ id: "google", name: "Google" });
  if (oauth.oidc) list.push({ id: "oidc", name: oauth.oidc.name });
  return list;
}

function providers(): Provider[] {
  const { oauth } = getConfig();
  const list: Provider[] = [
    Credentials({
      credentials: { email: {}, password: {} },
      async authorize(credentials, request) {
        try {
          const db = await getDb();
          const user = await verifyCredentials(db, credentials, clientIp(request.headers), {
            cookie: request.headers.get("cookie"),
          });
          return user ? { id: user.id, email: user.email, name: user.name, image: user.image } : null;
        } catch (e) {
          if (e instanceof RateLimitedError) throw new RateLimitedSignin();
          if (isDatabaseUnavailable(e)) throw new UnavailableSignin();
          throw e;
        }
      },
    }),
  ];
  if (oauth.github) list.push(GitHub({ clientId: oauth.github.clientId, clientSecret: oauth.github.clientSecret }));
  if (oauth.google) list.push(Google({ clientId: oauth.google.clientId, clientSecret: oauth.google.clientSecret }));
  if (oauth.oidc) {
    list.push({
      id: "oidc",
      name: oauth.oidc.name,
      type: "oidc",
      issuer: oauth.oidc.issuer,
      clientId: oauth.oidc.clientId,
      clientSecret: oauth.oidc.clientSecret,
    });
  }
  return list;
}

async function fullConfig(): Promise<NextAuthConfig> {
  const config = getConfig();
  const db = await getDb();
  const base = PrismaAdapter(db as never) as Adapter;
  const adapter: Adapter = {
    ...base,
    // OAuth sign-ups go through the same rule as registration: first account is admin.
    // Registration modes apply too (an invitation for the email, or closed).
    createUser: async ({ id: _id, ...data }) => {
      const admitted = await admitRegistration(db, data.email, { oauth: true });
      return (await createUser(db, data, admitted)) as unknown as AdapterUser;
    },
  };
  return {
    ...authConfig,
    secret: config.authSecret,
    // A wrong password is routine: one line, not a stack trace. Anything else is logged whole.
    logger: {
      error(error) {
        const type = (error as { type?: string }).type ?? error.name;
        if (error instanceof CredentialsSignin || type === "CredentialsSignin")
          console.warn(`[auth] sign-in refused (${(error as CredentialsSignin).code ?? "credentials"})`);
        else console.error(`[auth][error] ${type}:`, error);
      },
    },
    adapter,
    providers: providers(),
    events: {
      async signOut(message) {
        if ("token" in message && message.token) await recordSignOut(db, message.token);
      },
    },
    callbacks: {
      ...authConfig.callbacks,
      async signIn({ user }) {
        if (!user?.id) return true; // new OAuth user: created enabled
        const u = await db.user.findUnique({ where: { id: user.id }, select: { disabled: true } });
        return !u?.disabled;
      },
      async jwt({ token, user }) {
        const id = user?.id ?? token.sub;
        if (!id) return null;
        let current: Awaited<ReturnType<typeof activeUser>>;
        try {
          current = await activeUser(db, id, typeof token.sid === "string" ? token.sid : undefined);
        } catch (e) {
          // The database is down: keep the signed session as it is rather than
          // signing everyone out; pages then show the 503 "can't reach its database".
          if (isDatabaseUnavailable(e)) return token;
          throw e;
        }
        if (!current) return null; // deleted or disabled: the session ends now
        // A password change ends every other session (not the one signing in now).
        if (!user && !sessionOutlivesPasswordChange(current, token as { authAt?: unknown; sid?: unknown })) return null;
        // When the user last proved who they are (deleting the account asks for a recent sign-in).
        if (user) {
          token.authAt = Date.now();
          // Names this session, so signing out can refuse its token from then on.
          token.sid = crypto.randomUUID();
        }
        token.sub = current.id;
        token.role = current.role;
        token.name = current.name;
        token.email = current.email;
        token.mustChangePassword = current.mustChangePassword;
        return token;
      },
      async session({ session, token }) {
        session.user.id = token.sub as string;
        session.user.role = token.role as Role;
        (session.user as { authAt?: number }).authAt = typeof token.authAt === "number" ? token.authAt : 0;
        (session.user as { sid?: string }).sid = typeof token.sid === "string" ? token.sid : undefined;
        (session.user as { mustChangePassword?: boolean }).mustChangePassword = token.mustChangePassword === true;
        return session;
      },
    },
  };
}

export const { handlers, auth, signIn, signOut } = NextAuth(fullConfig);
