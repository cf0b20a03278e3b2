// Rate limits for sign-in and registration, counted in the database
// (rate-limiter-flexible's Prisma store) so they hold across app instances.
import { RateLimiterPrisma, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { RateLimitedError } from "@/lib/errors";

export type LimitName = "signin-email" | "signin-email-slow" | "signin-ip" | "register-ip" | "reset-email" | "reset-ip";

const limiters = new WeakMap<Db, Map<LimitName, RateLimiterPrisma>>();

function limiter(db: Db, name: LimitName): RateLimiterPrisma {
  let byName = limiters.get(db);
  if (!byName) limiters.set(db, (byName = new Map()));
  let l = byName.get(name);
  if (!l) {
    const { rateLimit } = getConfig();
    const points = {
      "signin-email": rateLimit.signinPerEmail,
      "signin-email-slow": 1,
      "signin-ip": rateLimit.signinPerIp,
      "register-ip": rateLimit.registerPerIp,
      // Reset links: a few per address (each mails its owner), more per network.
      "reset-email": 5,
      "reset-ip": rateLimit.registerPerIp,
    }[name];
    l = new RateLimiterPrisma({
      storeClient: db,
      tableName: "rateLimiterFlexible",
      keyPrefix: name,
      points,
      // Past the per-email limit, one attempt per cooldown: slow for a guesser, a short wait for the owner.
      duration: name === "signin-email-slow" ? rateLimit.cooldownSeconds : rateLimit.windowSeconds,
      clearExpiredByTimeout: false,
    });
    byName.set(name, l);
  }
  return l;
}

/** Consumes one point from each limit; throws RateLimitedError when any is exhausted. */
export async function consume(db: Db, checks: Array<[LimitName, string]>): Promise<void> {
  for (const [name, key] of checks) {
    try {
      await limiter(db, name).consume(key);
    } catch (e) {
      if (e instanceof RateLimiterRes) throw new RateLimitedError(e.msBeforeNext / 1000);
      throw e;
    }
  }
}

export async function reset(db: Db, name: LimitName, key: string): Promise<void> {
  await limiter(db, name).delete(key);
}
