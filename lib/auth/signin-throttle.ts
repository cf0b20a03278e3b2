// How password guesses are slowed without locking the owner out. Counted in
// the database (rate-limiter-flexible's Prisma store), so every instance agrees.
//
// - Per address, across emails: MNEMO_SIGNIN_LIMIT_PER_IP attempts per window.
// - Per (email, address): 5 failures are free, then each further failure makes
//   that address wait 2, 4, 8 … seconds (at most 15 minutes) before it may try
//   this email again. A guesser on one address crawls; nobody else is touched.
// - Per email, across addresses: past MNEMO_SIGNIN_LIMIT_PER_EMAIL failures in
//   the window, the email takes one attempt per MNEMO_SIGNIN_COOLDOWN_SECONDS
//   (so a guesser spread over many addresses crawls too), and the attempt that
//   reaches the limit starts that cooldown: it admits no extra guess. A browser
//   that has signed in to this account before (its device cookie, lib/auth/
//   device.ts) is exempt from this ceiling, so others' failures never keep the
//   owner out of a known browser; on a new one, the owner waits a cooldown.
// Checks run before the password is evaluated; the counts change after.
import { RateLimitedError } from "@/lib/errors";
import { RateLimiterPrisma, RateLimiterRes } from "rate-limiter-flexible";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";

const FREE_FAILURES_PER_ADDRESS = 5;
const MAX_DELAY_SECONDS = 15 * 60;
const COUNT_ONLY = 1_000_000; // failure counters: never "exhausted", only counted

type Limiters = {
  pairFailures: RateLimiterPrisma;
  pairWait: RateLimiterPrisma;
  emailFailures: RateLimiterPrisma;
  emailSlow: RateLimiterPrisma;
};
const byDb = new WeakMap<Db, Limiters>();

function limiters(db: Db): Limiters {
  let l = byDb.get(db);
  if (!l) {
    const { rateLimit } = getConfig();
    const make = (keyPrefix: string, points: number, duration: number) =>
      new RateLimiterPrisma({
        storeClient: db,
        tableName: "rateLimiterFlexible",
        keyPrefix,
        points,
        duration,
        clearExpiredByTimeout: false,
      });
    l = {
      pairFailures: make("signin-fail-pair", COUNT_ONLY, rateLimit.windowSeconds),
      pairWait: make("signin-wait-pair", 1, 1),
      emailFailures: make("signin-fail-email", COUNT_ONLY, rateLimit.windowSeconds),
      emailSlow: make("signin-email-slow", 1, rateLimit.cooldownSeconds),
    };
    byDb.set(db, l);
  }
  return l;
}

const pairKey = (email: string, ip: string) => `${email}|${ip}`;

/** Throws RateLimitedError when this attempt must wait; otherwise the password may be evaluated. */
export async function admitSignIn(db: Db, email: string, ip: string, knownDevice: boolean): Promise<void> {
  const l = limiters(db);
  const wait = await l.pairWait.get(pairKey(email, ip));
  if (wait && wait.consumedPoints > 1 && wait.msBeforeNext > 0) throw new RateLimitedError(wait.msBeforeNext / 1000);
  if (knownDevice) return;
  const failures = await l.emailFailures.get(email);
  if ((failures?.consumedPoints ?? 0) < getConfig().rateLimit.signinPerEmail) return;
  try {
    await l.emailSlow.consume(email); // one attempt per cooldown, taken atomically across instances
  } catch (e) {
    if (e instanceof RateLimiterRes) throw new RateLimitedError(e.msBeforeNext / 1000);
    throw e;
  }
}

/** Records a wrong password: the address's delay for this email grows, and the email's count. */
export async function recordSignInFailure(db: Db, email: string, ip: string): Promise<void> {
  const l = limiters(db);
  const { rateLimit } = getConfig();
  const pair = await l.pairFailures.penalty(pairKey(email, ip), 1);
  const over = pair.consumedPoints - FREE_FAILURES_PER_ADDRESS;
  if (over > 0) await l.pairWait.block(pairKey(email, ip), Math.min(2 ** over, MAX_DELAY_SECONDS));
  const all = await l.emailFailures.penalty(email, 1);
  // The failure that reaches the ceiling starts the cooldown, so the limit admits no extra guess.
  if (all.consumedPoints === rateLimit.signinPerEmail) await l.emailSlow.block(email, rateLimit.cooldownSeconds);
}

/** The right password: this address starts afresh for this email (the email's count stays, for others). */
export async function recordSignInSuccess(db: Db, email: string, ip: string): Promise<void> {
  const l = limiters(db);
  await Promise.all([l.pairFailures.delete(pairKey(email, ip)), l.pairWait.delete(pairKey(email, ip))]);
}
