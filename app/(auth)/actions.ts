"use server";
import { redirect } from "next/navigation";

// Sign-in, registration and sign-out. Inputs are validated with zod; failures
// come back as form state (never as thrown errors the user cannot read).
import { AuthError, CredentialsSignin } from "next-auth";
import { cookies, headers } from "next/headers";
import { isRedirectError } from "next/dist/client/components/redirect-error";
import { z } from "zod";
import { signIn, signOut, oauthProviders } from "@/auth";
import { getDb } from "@/lib/db/client";
import { clientIp } from "@/lib/auth/client-ip";
import { registerAccount, registerSchema } from "@/lib/auth/users";
import { requestPasswordReset, resetPassword } from "@/lib/auth/password-reset";
import { mailConfigured } from "@/lib/mail/mailer";
import { AppError, DATABASE_DOWN, RateLimitedError, RegistrationClosedError, publicError } from "@/lib/errors";
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE, deviceToken } from "@/lib/auth/device";

export type FormState = {
  error?: string;
  /** The form is done: a sentence to show in its place. */
  done?: string;
  fieldErrors?: Record<string, string>;
  values?: Record<string, string>;
};

const GENERIC_SIGNIN_ERROR = "Incorrect email or password.";

/** Only same-site paths: never redirect a user to another site after sign-in. */
function safeCallback(raw: FormDataEntryValue | null): string {
  if (typeof raw !== "string" || !raw) return "/";
  try {
    const u = new URL(raw, "http://mnemo.local");
    const path = u.pathname + u.search;
    return path.startsWith("/") &&
      !path.startsWith("//") &&
      !path.startsWith("/signin") &&
      !path.startsWith("/register")
      ? path
      : "/";
  } catch {
    return "/";
  }
}

function fieldErrors(e: z.ZodError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const i of e.issues) out[String(i.path[0])] ??= i.message;
  return out;
}

async function credentialsSignIn(email: string, password: string, redirectTo: string): Promise<FormState | never> {
  try {
    await signIn("credentials", { email, password, redirectTo });
    return {};
  } catch (e) {
    if (e instanceof CredentialsSignin && e.code === "rate_limited") {
      return { error: "Too many sign-in attempts. Wait a few minutes and try again.", values: { email } };
    }
    if (e instanceof CredentialsSignin && e.code === "unavailable") return { error: DATABASE_DOWN, values: { email } };
    if (e instanceof AuthError) return { error: GENERIC_SIGNIN_ERROR, values: { email } };
    if (isRedirectError(e)) {
      // Signed in: this browser is now known to the account (lib/auth/device.ts).
      (await cookies()).set(DEVICE_COOKIE, deviceToken(email), {
        httpOnly: true,
        sameSite: "lax",
        secure: (await headers()).get("x-forwarded-proto") === "https",
        maxAge: DEVICE_COOKIE_MAX_AGE,
        path: "/",
      });
    }
    throw e; // Next.js redirect on success
  }
}

export async function signInAction(_prev: FormState, form: FormData): Promise<FormState> {
  const email = String(form.get("email") ?? "");
  const password = String(form.get("password") ?? "");
  if (!email.trim() || !password) {
    return {
      fieldErrors: {
        ...(!email.trim() && { email: "Enter your email address." }),
        ...(!password && { password: "Enter your password." }),
      },
      values: { email },
    };
  }
  return credentialsSignIn(email, password, safeCallback(form.get("callbackUrl")));
}

export async function registerAction(_prev: FormState, form: FormData): Promise<FormState> {
  const raw = {
    name: String(form.get("name") ?? ""),
    email: String(form.get("email") ?? ""),
    password: String(form.get("password") ?? ""),
  };
  const values = { name: raw.name, email: raw.email };
  const parsed = registerSchema().safeParse(raw);
  if (!parsed.success) return { fieldErrors: fieldErrors(parsed.error), values };
  const db = await getDb();
  const invite = String(form.get("invite") ?? "") || undefined;
  let user;
  try {
    user = await registerAccount(db, parsed.data, clientIp(await headers()), invite);
  } catch (e) {
    if (e instanceof RegistrationClosedError) return { error: e.message, values };
    if (e instanceof RateLimitedError)
      return { error: "Too many accounts created from this network. Try again later.", values };
    throw e;
  }
  // The first account (nobody else to reveal) and an invited one (the invitation names
  // the email) sign in at once. Otherwise the answer is the same whether or not the email
  // already had an account: sign in (or read the email we sent).
  if (user && (user.role === "ADMIN" || invite)) return credentialsSignIn(parsed.data.email, parsed.data.password, "/");
  if (mailConfigured()) return { done: `We've sent a message to ${parsed.data.email}. Follow it to sign in.`, values };
  // The next step, the same for a new email and a known one: sign in, the email already filled in.
  redirect(`/signin?registered=1&email=${encodeURIComponent(parsed.data.email)}`);
}

export async function forgotPasswordAction(_prev: FormState, form: FormData): Promise<FormState> {
  const email = String(form.get("email") ?? "").slice(0, 400);
  const sent = `If ${email.trim()} has an account here, we've sent it a link to choose a new password. The link works for an hour.`;
  try {
    await requestPasswordReset(await getDb(), email, clientIp(await headers()));
    return { done: sent, values: { email } };
  } catch (e) {
    if (e instanceof z.ZodError)
      return { fieldErrors: { email: e.issues[0]?.message ?? "Enter a valid email address." }, values: { email } };
    return { error: publicError(e, "forgot-password").message, values: { email } };
  }
}

const resetSchema = z.object({
  token: z.string().min(1).max(200),
  next: z.string().max(256),
  confirm: z.string().max(256),
});

export async function resetPasswordAction(_prev: FormState, form: FormData): Promise<FormState> {
  const parsed = resetSchema.safeParse({
    token: form.get("token"),
    next: form.get("next"),
    confirm: form.get("confirm"),
  });
  if (!parsed.success) return { error: "This reset link is not complete. Open it again from the email." };
  try {
    await resetPassword(await getDb(), parsed.data.token, parsed.data);
  } catch (e) {
    if (e instanceof z.ZodError) return { fieldErrors: fieldErrors(e) };
    if (e instanceof AppError) return { error: e.message };
    return { error: publicError(e, "reset-password").message };
  }
  return { done: "Your password is changed and every device was signed out. Sign in with the new one." };
}

const providerSchema = z.string().min(1).max(50);

export async function oauthSignInAction(form: FormData): Promise<void> {
  const id = providerSchema.parse(form.get("provider"));
  if (!oauthProviders().some((p) => p.id === id)) throw new Error("Unknown sign-in provider");
  await signIn(id, { redirectTo: safeCallback(form.get("callbackUrl")) });
}

export async function signOutAction(): Promise<void> {
  await signOut({ redirectTo: "/signin" });
}
