"use server";
import { redirect } from "next/navigation";

// Sign-in, registration, password reset and sign-out. The forms go through
// formAction (lib/http/action.ts): validated, and every failure comes back as
// form state (never as a thrown error the user cannot read).
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
import { AppError, DATABASE_DOWN, RateLimitedError } from "@/lib/errors";
import { formAction, type FormState } from "@/lib/http/action";
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE, deviceToken } from "@/lib/auth/device";

export type { FormState } from "@/lib/http/action";

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

const signInInput = z.object({
  email: z.string().trim().min(1, "Enter your email address.").max(400),
  password: z.string().min(1, "Enter your password.").max(256),
});

export const signInAction = formAction(
  signInInput,
  ({ email, password }, form) => credentialsSignIn(email, password, safeCallback(form.get("callbackUrl"))),
  { name: "signInAction", echo: ["email"] },
);

export const registerAction = formAction(
  z.lazy(registerSchema), // lazy: it reads the configured password length
  async (input, form) => {
    const db = await getDb();
    const invite = String(form.get("invite") ?? "") || undefined;
    const user = await registerAccount(db, input, clientIp(await headers()), invite).catch((e) => {
      throw e instanceof RateLimitedError
        ? new AppError("Too many accounts created from this network. Try again later.")
        : e;
    });
    // The first account (nobody else to reveal) and an invited one (the invitation names
    // the email) sign in at once. Otherwise the answer is the same whether or not the email
    // already had an account: sign in (or read the email we sent).
    if (user && (user.role === "ADMIN" || invite)) return credentialsSignIn(input.email, input.password, "/");
    if (mailConfigured()) return { done: `We've sent a message to ${input.email}. Follow it to sign in.` };
    // The next step, the same for a new email and a known one: sign in, the email already filled in.
    redirect(`/signin?registered=1&email=${encodeURIComponent(input.email)}`);
  },
  { name: "registerAction", echo: ["name", "email"] },
);

export const forgotPasswordAction = formAction(
  z.object({ email: z.string().max(400) }),
  async ({ email }) => {
    try {
      await requestPasswordReset(await getDb(), email, clientIp(await headers()));
    } catch (e) {
      if (e instanceof z.ZodError)
        return { fieldErrors: { email: e.issues[0]?.message ?? "Enter a valid email address." } };
      throw e;
    }
    return {
      done: `If ${email.trim()} has an account here, we've sent it a link to choose a new password. The link works for an hour.`,
    };
  },
  { name: "forgot-password", echo: ["email"] },
);

const resetSchema = z.object({
  token: z.string().min(1).max(200),
  next: z.string().max(256),
  confirm: z.string().max(256),
});

export const resetPasswordAction = formAction(
  resetSchema,
  async (input) => {
    await resetPassword(await getDb(), input.token, input);
    return { done: "Your password is changed and every device was signed out. Sign in with the new one." };
  },
  { name: "reset-password", invalid: "This reset link is not complete. Open it again from the email." },
);

const providerSchema = z.string().min(1).max(50);

export async function oauthSignInAction(form: FormData): Promise<void> {
  // Only the sign-in page's buttons post here: anything else goes back to the sign-in page.
  const id = providerSchema.safeParse(form instanceof FormData ? form.get("provider") : null);
  if (!id.success || !oauthProviders().some((p) => p.id === id.data)) redirect("/signin");
  const provider = id.data;
  await signIn(provider, { redirectTo: safeCallback(form.get("callbackUrl")) });
}

export async function signOutAction(): Promise<void> {
  await signOut({ redirectTo: "/signin" });
}
