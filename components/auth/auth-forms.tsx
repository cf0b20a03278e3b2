"use client";
import Link from "next/link";
import { useActionState } from "react";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { FormField } from "@/components/ui/form-field";
import {
  forgotPasswordAction,
  registerAction,
  resetPasswordAction,
  signInAction,
  type FormState,
} from "@/app/(auth)/actions";

const linkClass = "font-medium text-primary underline-offset-4 hover:underline";

/** What a finished form says in its place. */
function Done({ text, children }: { text: string; children?: React.ReactNode }) {
  return (
    <div className="grid gap-3" data-testid="form-done">
      <p role="status" className="rounded-md bg-muted px-3 py-2 text-sm">
        {text}
      </p>
      {children}
    </div>
  );
}

export function SignInForm({ callbackUrl, email }: { callbackUrl?: string; email?: string }) {
  const [state, action, pending] = useActionState<FormState, FormData>(signInAction, {});
  return (
    <form action={action} className="grid gap-4" noValidate>
      {state.error && (
        <Alert variant="error" data-testid="form-error">
          {state.error}
        </Alert>
      )}
      <input type="hidden" name="callbackUrl" value={callbackUrl ?? "/"} />
      <FormField
        id="email"
        label="Email"
        type="email"
        autoComplete="email"
        required
        autoFocus={!email}
        defaultValue={state.values?.email ?? email}
        error={state.fieldErrors?.email}
      />
      <FormField
        id="password"
        label="Password"
        type="password"
        autoComplete="current-password"
        required
        autoFocus={!!email}
        error={state.fieldErrors?.password}
      />
      <Button type="submit" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </Button>
      <p className="text-center text-sm text-muted-foreground">
        <Link href="/forgot-password" className={linkClass}>
          Forgot your password?
        </Link>
        {" · "}
        New here?{" "}
        <Link href="/register" className={linkClass}>
          Create an account
        </Link>
      </p>
    </form>
  );
}

export function RegisterForm({ minLength, invite }: { minLength: number; invite?: { token: string; email: string } }) {
  const [state, action, pending] = useActionState<FormState, FormData>(registerAction, {});
  if (state.done) {
    return (
      <Done text={state.done}>
        <Link href={`/signin?email=${encodeURIComponent(state.values?.email ?? "")}`} className={linkClass}>
          Sign in
        </Link>
      </Done>
    );
  }
  return (
    <form action={action} className="grid gap-4" noValidate>
      {state.error && (
        <Alert variant="error" data-testid="form-error">
          {state.error}
        </Alert>
      )}
      {invite && <input type="hidden" name="invite" value={invite.token} />}
      <FormField
        id="name"
        label="Name (optional)"
        autoComplete="name"
        defaultValue={state.values?.name}
        error={state.fieldErrors?.name}
      />
      <FormField
        id="email"
        label="Email"
        type="email"
        autoComplete="email"
        required
        defaultValue={state.values?.email ?? invite?.email}
        error={state.fieldErrors?.email}
      />
      <FormField
        id="password"
        label="Password"
        type="password"
        autoComplete="new-password"
        required
        minLength={minLength}
        hint={`At least ${minLength} characters.`}
        error={state.fieldErrors?.password}
      />
      <Button type="submit" disabled={pending}>
        {pending ? "Creating account…" : "Create account"}
      </Button>
      <p className="text-center text-sm text-muted-foreground">
        Already have an account?{" "}
        <Link href="/signin" className="font-medium text-primary underline-offset-4 hover:underline">
          Sign in
        </Link>
      </p>
    </form>
  );
}

export function ForgotPasswordForm() {
  const [state, action, pending] = useActionState<FormState, FormData>(forgotPasswordAction, {});
  if (state.done)
    return (
      <Done text={state.done}>
        <Link href="/signin" className={linkClass}>
          Back to sign in
        </Link>
      </Done>
    );
  return (
    <form action={action} className="grid gap-4" noValidate>
      {state.error && (
        <Alert variant="error" data-testid="form-error">
          {state.error}
        </Alert>
      )}
      <FormField
        id="email"
        label="Email"
        type="email"
        autoComplete="email"
        required
        autoFocus
        defaultValue={state.values?.email}
        error={state.fieldErrors?.email}
      />
      <Button type="submit" disabled={pending}>
        {pending ? "Sending…" : "Send me a link"}
      </Button>
      <p className="text-center text-sm text-muted-foreground">
        <Link href="/signin" className={linkClass}>
          Back to sign in
        </Link>
      </p>
    </form>
  );
}

export function ResetPasswordForm({ token, minLength }: { token: string; minLength: number }) {
  const [state, action, pending] = useActionState<FormState, FormData>(resetPasswordAction, {});
  if (state.done)
    return (
      <Done text={state.done}>
        <Link href="/signin" className={linkClass}>
          Sign in
        </Link>
      </Done>
    );
  return (
    <form action={action} className="grid gap-4" noValidate>
      {state.error && (
        <Alert variant="error" data-testid="form-error">
          {state.error}
        </Alert>
      )}
      <input type="hidden" name="token" value={token} />
      <FormField
        id="next"
        label="New password"
        type="password"
        autoComplete="new-password"
        required
        autoFocus
        minLength={minLength}
        hint={`At least ${minLength} characters.`}
        error={state.fieldErrors?.next}
      />
      <FormField
        id="confirm"
        label="New password again"
        type="password"
        autoComplete="new-password"
        required
        minLength={minLength}
        error={state.fieldErrors?.confirm}
      />
      <Button type="submit" disabled={pending}>
        {pending ? "Saving…" : "Save new password"}
      </Button>
    </form>
  );
}
