"use server";
// Sign-in, registration and sign-out. Inputs are validated with zod; failures
// come back as form state (never as thrown errors the user cannot read).
import { AuthError, CredentialsSignin } from "next-auth";
import { headers } from "next/headers";
import { z } from "zod";
import { signIn, signOut, oauthProviders } from "@/auth";
import { getDb } from "@/lib/db/client";
import { clientIp } from "@/lib/auth/client-ip";
import { EmailTakenError, registerSchema, registerWithPassword } from "@/lib/auth/users";
import { RateLimitedError } from "@/lib/auth/rate-limit";
import { RegistrationClosedError } from "@/lib/auth/registration";

export type FormState = {
  error?: string;
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
    return path.startsWith("/") && !path.startsWith("//") && !path.startsWith("/signin") && !path.startsWith("/register") ? path : "/";
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
    if (e instanceof AuthError) return { error: GENERIC_SIGNIN_ERROR, values: { email } };
    throw e; // Next.js redirect on success
  }
}

export async function signInAction(_prev: FormState, form: FormData): Promise<FormState> {
  const email = String(form.get("email") ?? "");
  const password = String(form.get("password") ?? "");
  if (!email.trim() || !password) {
    return {
      fieldErrors: { ...(!email.trim() && { email: "Enter your email address." }), ...(!password && { password: "Enter your password." }) },
      values: { email },
    };
  }
  return credentialsSignIn(email, password, safeCallback(form.get("callbackUrl")));
}

export async function registerAction(_prev: FormState, form: FormData): Promise<FormState> {
  const raw = { name: String(form.get("name") ?? ""), email: String(form.get("email") ?? ""), password: String(form.get("password") ?? "") };
  const values = { name: raw.name, email: raw.email };
  const parsed = registerSchema().safeParse(raw);
  if (!parsed.success) return { fieldErrors: fieldErrors(parsed.error), values };
  const db = await getDb();
  try {
    await registerWithPassword(db, parsed.data, clientIp(await headers()), String(form.get("invite") ?? "") || undefined);
  } catch (e) {
    if (e instanceof EmailTakenError) return { fieldErrors: { email: e.message }, values };
    if (e instanceof RegistrationClosedError) return { error: e.message, values };
    if (e instanceof RateLimitedError) return { error: "Too many accounts created from this network. Try again later.", values };
    throw e;
  }
  return credentialsSignIn(parsed.data.email, parsed.data.password, "/");
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
