// One error vocabulary for every server action and route handler. An error the
// user can act on is an AppError (its message is shown, with its status);
// a database that cannot be reached is a 503 with a short, true sentence;
// anything else is logged in full with a reference the user can quote, and the
// user sees only that reference: never a stack, a query or a column name.
import { z } from "zod";

/** An error whose message is written for the user. */
export class AppError extends Error {
  constructor(
    message: string,
    public status = 400,
  ) {
    super(message);
  }
}

export class NotFoundError extends AppError {
  constructor(message = "Not found.") {
    super(message, 404);
  }
}

export const DATABASE_DOWN = "Mnemo can't reach its database right now. Try again in a moment.";
/** The digest a page's error boundary receives for an unreachable database (see markUnavailable). */
export const DATABASE_DOWN_DIGEST = "MNEMO_DATABASE_DOWN";

// Prisma's codes for "cannot reach / lost / timed out on the database", and the
// drivers' own words for it (pg, PGlite, the adapters).
const DB_CODES = new Set([
  "P1001",
  "P1002",
  "P1008",
  "P1017",
  "P2024",
  "P2037",
  "ECONNREFUSED",
  "ECONNRESET",
  "57P01",
  "57P03",
  "08006",
  "08001",
  "08003",
]);
const DB_WORDS =
  /can't reach database|connection terminated|connection refused|ECONNREFUSED|ECONNRESET|the database system is (?:starting up|shutting down)|terminating connection|Connection closed|timeout exceeded when trying to connect|database is closed|PGlite is closed|server has closed the connection/i;

export function isDatabaseUnavailable(e: unknown): boolean {
  for (
    let err = e as { code?: unknown; message?: unknown; cause?: unknown } | undefined, i = 0;
    err && i < 5;
    err = err.cause as typeof err, i++
  ) {
    if (typeof err.code === "string" && DB_CODES.has(err.code)) return true;
    if (typeof err.message === "string" && DB_WORDS.test(err.message)) return true;
  }
  return false;
}

/**
 * Marks an unreachable-database error (from Prisma or the driver, lib/db/) with
 * a digest that Next.js passes to the page's error boundary (app/error.tsx),
 * which can then say what happened instead of "something went wrong"
 * (production strips every error message).
 */
export function markUnavailable(e: unknown): never {
  if (e && typeof e === "object" && isDatabaseUnavailable(e))
    (e as { digest?: string }).digest ??= DATABASE_DOWN_DIGEST;
  throw e;
}

export type PublicError = { status: number; message: string; ref?: string };

/** What the user is told about an error; internal details are logged under a reference. */
export function publicError(e: unknown, where = "request"): PublicError {
  if (e instanceof AppError) return { status: e.status, message: e.message };
  if (e instanceof z.ZodError) return { status: 400, message: e.issues[0]?.message ?? "Invalid input." };
  const ref = globalThis.crypto.randomUUID().slice(0, 8);
  if (isDatabaseUnavailable(e)) {
    logError(ref, where, e, true);
    return { status: 503, message: DATABASE_DOWN, ref };
  }
  logError(ref, where, e);
  return {
    status: 500,
    message: `Something went wrong on Mnemo's side. If it keeps happening, quote reference ${ref}.`,
    ref,
  };
}

export function logError(ref: string, where: string, e: unknown, brief = false) {
  const err = e as Error | undefined;
  const detail = brief ? (err?.message ?? String(e)).split("\n").slice(-1)[0] : (err?.stack ?? String(e));
  console.error(`[mnemo] error ref=${ref} in ${where}: ${detail}`);
}
