// The one way to write a server action. `userAction` and `adminAction` (t3's
// protectedProcedure is the model) authenticate the caller, validate the
// action's arguments with a zod tuple (an action's arguments are its input:
// `z.tuple([id, text])` for `(threadId, title)`, `z.tuple([schema])` for one
// object), run the body with the database and the user, and return one shape,
// `Result<T>`. A body reports a failure the user can act on by throwing an
// AppError (lib/errors.ts); anything else is logged under a reference and the
// user sees only that. Next.js's own control flow (redirects) passes through.
// Forms (useActionState) use `formAction`, the same path with FormData in and
// FormState out.
import { unstable_rethrow } from "next/navigation";
import { z } from "zod";
import { publicError } from "@/lib/errors";
import { requireAdmin, requireUser, type SessionUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import type { Db } from "@/lib/db/types";
import { userContext, type UserContext } from "@/lib/user-context";

export type Result<T = undefined> = { ok: true; data: T } | { ok: false; error: string };

/** What an admin action's body is given: the database and the signed-in admin (checked before the body runs). */
export type ActionContext = { db: Db; user: SessionUser };
/** What a user action's body is given: the user's context (lib/user-context.ts), made once, and the session. */
export type UserActionContext = UserContext & { user: SessionUser };

type Args = z.ZodTuple<readonly z.ZodType[], null>;
type Options = {
  /** Named in the log line of an unexpected error. */
  name?: string;
  /** For the password page: a user who must still choose their own password may call it. */
  temporaryPasswordAllowed?: boolean;
};

/** Runs `fn`, turning any error into { ok: false, error } with a sentence for the user. */
export async function toResult<T>(where: string, fn: () => Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, data: await fn() };
  } catch (e) {
    unstable_rethrow(e);
    return { ok: false, error: publicError(e, where).message };
  }
}

function action<A extends Args, T, C>(
  args: A,
  fn: (input: z.output<A>, ctx: C) => Promise<T>,
  opts: Options,
  context: (o: Options) => Promise<C>,
) {
  return async (...input: z.input<A>): Promise<Result<T>> =>
    toResult(opts.name ?? "server action", async () => {
      const ctx = await context(opts); // who is asking comes before what they sent
      const parsed = args.parse(input);
      return fn(parsed, ctx);
    });
}

/** A server action for any signed-in user; the body works on `ctx.user`'s data only. */
export function userAction<A extends Args, T>(
  args: A,
  fn: (input: z.output<A>, ctx: UserActionContext) => Promise<T>,
  opts: Options = {},
) {
  return action(args, fn, opts, async (o): Promise<UserActionContext> => {
    const user = await requireUser({ temporaryPasswordAllowed: o.temporaryPasswordAllowed });
    return { ...(await userContext(await getDb(), user.id)), user };
  });
}

/** A server action for admins only. */
export function adminAction<A extends Args, T>(
  args: A,
  fn: (input: z.output<A>, ctx: ActionContext) => Promise<T>,
  opts: Options = {},
) {
  return action(args, fn, opts, async (): Promise<ActionContext> => ({
    user: await requireAdmin(),
    db: await getDb(),
  }));
}

/** A form's state for useActionState: a sentence, per-field errors, the values to refill, or "done". */
export type FormState = {
  error?: string;
  /** The form is done: a sentence to show in its place. */
  done?: string;
  fieldErrors?: Record<string, string>;
  values?: Record<string, string>;
};

/** What a form action says when what it was sent is not a form. */
export const UNREADABLE_FORM = "That form could not be read. Reload the page and try again.";

/** The first message for each field. */
export function fieldErrors(e: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of e.issues) out[String(i.path[0])] ??= i.message;
  return out;
}

/**
 * A form's action, for pages with no signed-in user (sign-in, registration, password reset): the form's fields
 * are validated by `schema`; a validation error becomes per-field errors (or `invalid`, when set), an AppError its
 * sentence, anything else a reference. `echo` names the fields sent back to refill the form (never a password).
 */
export function formAction<S extends z.ZodType>(
  schema: S,
  fn: (input: z.output<S>, form: FormData) => Promise<FormState>,
  opts: { name: string; echo?: string[]; invalid?: string },
) {
  return async (_prev: FormState, form: FormData): Promise<FormState> => {
    // Called by hand with anything else (null, nothing, JSON): a clear error, not a crash.
    if (!(form instanceof FormData)) return { error: UNREADABLE_FORM };
    const values = Object.fromEntries((opts.echo ?? []).map((k) => [k, String(form.get(k) ?? "")]));
    const keep = (s: FormState): FormState => (opts.echo ? { values, ...s } : s);
    try {
      const parsed = schema.safeParse(Object.fromEntries(form.entries()));
      if (!parsed.success)
        return keep(opts.invalid ? { error: opts.invalid } : { fieldErrors: fieldErrors(parsed.error) });
      return keep(await fn(parsed.data, form));
    } catch (e) {
      unstable_rethrow(e);
      if (e instanceof z.ZodError) return keep({ fieldErrors: fieldErrors(e) });
      return keep({ error: publicError(e, opts.name).message });
    }
  };
}
