// One error vocabulary for every server action and route handler. An error the
// user can act on is an AppError (its message is shown, with its status);
// a database that cannot be reached is a 503 with a short, true sentence;
// anything else is logged in full with a reference the user can quote, and the
// user sees only that reference: never a stack, a query or a column name.
import { z } from "zod";
import { count } from "@/lib/text/plural";

/** An error whose message is written for the user. */
export class AppError extends Error {
  /** OpenAI's name for this error, where it has one (/v1 answers it as `error.code`). */
  code?: string;
  constructor(
    message: string,
    public status = 400,
  ) {
    super(message);
  }
}

/** Something that does not exist, or is not the caller's: both get the same answer. */
export class NotFoundError extends AppError {
  constructor(what: "thread" | "memory" | "answer" | "account" | "user" | "item" | "project" | "member" = "item") {
    super(`${what[0].toUpperCase()}${what.slice(1)} not found.`, 404);
  }
}

// The errors a user can act on, each with its sentence and status. Every module throws these; no other
// module defines an AppError of its own.
export class AdminAccessDisabledError extends AppError {
  constructor() {
    super(
      "Admin access to users' threads and memories is turned off on this deployment (MNEMO_ADMIN_THREAD_ACCESS=off).",
      403,
    );
  }
}

/** A model a /v1 caller named that is not on the admin's list (lib/llm/models.ts): OpenAI's 404. */
export class ModelNotFoundError extends AppError {
  code = "model_not_found";
  constructor(id: string) {
    super(`The model '${id}' does not exist or you do not have access to it. GET /v1/models lists the ones here.`, 404);
  }
}

export class EmailTakenError extends AppError {
  constructor() {
    super("An account with this email already exists. Sign in instead.", 409);
  }
}

export class LastAdminError extends AppError {
  constructor(message = "Mnemo needs at least one active admin: promote someone else first.") {
    super(message, 409);
  }
}

export class SessionEndedError extends AppError {
  constructor() {
    super("Your session has ended. Sign in again.", 401);
  }
}

export class TemporaryPasswordError extends AppError {
  constructor() {
    super("Choose your own password first (Settings → Password).", 403);
  }
}

/** An answer's chat deleted while it was written (by its author elsewhere, or with a member leaving a project). */
export class ChatGoneError extends AppError {
  constructor() {
    super("This chat is no longer here: it was deleted while the answer was being written.", 410);
  }
}

/** A file the message names is not an unsent draft of the sender's here (sent already, removed, or elsewhere). */
export class AttachmentGoneError extends AppError {
  constructor() {
    super("An attachment is gone (sent already, or removed): attach it again.", 409);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "Sign in first.") {
    super(message, 401);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = "You do not have access to this.") {
    super(message, 403);
  }
}

export class WrongPasswordError extends AppError {
  constructor() {
    super("That is not your current password.", 400);
  }
}

export class RegistrationClosedError extends AppError {
  constructor(message: string) {
    super(message, 403);
  }
}

export class ResetLinkError extends AppError {
  constructor() {
    super("This reset link has expired or was already used. Ask for a new one.", 400);
  }
}

export class RateLimitedError extends AppError {
  constructor(public retryAfterSeconds: number) {
    super(
      retryAfterSeconds < 60
        ? `Too many attempts. Try again in ${count(Math.max(1, Math.ceil(retryAfterSeconds)), "second")}.`
        : `Too many attempts. Try again in ${count(Math.ceil(retryAfterSeconds / 60), "minute")}.`,
      429,
    );
  }
}

export class SecretRefusedError extends AppError {
  constructor() {
    super("That looks like a secret (a password, key or account number); Mnemo never stores secrets.", 400);
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

export const CHANGED_MEANWHILE =
  "That changed while you were working on it (deleted or edited elsewhere). Reload to see it as it is now.";
/**
 * Prisma's codes for a row that went away between a request's check and its write ("record to update not found",
 * a missing related row) and for a write that lost a race with another transaction: both are another tab, another
 * device or a background job getting there first, not a fault.
 */
const RACE_CODES = new Set(["P2025", "P2018", "P2034"]);
const isRace = (e: unknown) => RACE_CODES.has(String((e as { code?: unknown } | undefined)?.code ?? ""));

const isZodLike = (e: unknown): e is { issues: Array<{ message: string }> } =>
  (e as { name?: string })?.name === "ZodError" && Array.isArray((e as { issues?: unknown }).issues);

/** What the user is told about an error; internal details are logged under a reference. */
export function publicError(e: unknown, where = "request"): PublicError {
  if (e instanceof AppError) return { status: e.status, message: e.message };
  // By shape too: a bundle may hold a second copy of zod, whose errors are not instances of this one's class.
  if (e instanceof z.ZodError || isZodLike(e))
    return { status: 400, message: e.issues[0]?.message ?? "Invalid input." };
  const ref = globalThis.crypto.randomUUID().slice(0, 8);
  if (isDatabaseUnavailable(e)) {
    logError(ref, where, e, true);
    return { status: 503, message: DATABASE_DOWN, ref };
  }
  if (isRace(e)) {
    logError(ref, where, e, true);
    return { status: 409, message: CHANGED_MEANWHILE, ref };
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
