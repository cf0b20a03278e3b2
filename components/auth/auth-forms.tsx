"use client";
import Link from "next/link";
import { useActionState } from "react";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { FormField } from "@/components/ui/form-field";
import { registerAction, signInAction, type FormState } from "@/app/(auth)/actions";

export function SignInForm({ callbackUrl }: { callbackUrl?: string }) {
  const [state, action, pending] = useActionState<FormState, FormData>(signInAction, {});
  return (
    <form action={action} className="grid gap-4" noValidate>
      {state.error && <Alert variant="error" data-testid="form-error">{state.error}</Alert>}
      <input type="hidden" name="callbackUrl" value={callbackUrl ?? "/"} />
      <FormField id="email" label="Email" type="email" autoComplete="email" required autoFocus defaultValue={state.values?.email} error={state.fieldErrors?.email} />
      <FormField id="password" label="Password" type="password" autoComplete="current-password" required error={state.fieldErrors?.password} />
      <Button type="submit" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </Button>
      <p className="text-center text-sm text-muted-foreground">
        New here?{" "}
        <Link href="/register" className="font-medium text-primary underline-offset-4 hover:underline">
          Create an account
        </Link>
      </p>
    </form>
  );
}

export function RegisterForm({ minLength, invite }: { minLength: number; invite?: { token: string; email: string } }) {
  const [state, action, pending] = useActionState<FormState, FormData>(registerAction, {});
  return (
    <form action={action} className="grid gap-4" noValidate>
      {state.error && <Alert variant="error" data-testid="form-error">{state.error}</Alert>}
      {invite && <input type="hidden" name="invite" value={invite.token} />}
      <FormField id="name" label="Name (optional)" autoComplete="name" defaultValue={state.values?.name} error={state.fieldErrors?.name} />
      <FormField id="email" label="Email" type="email" autoComplete="email" required defaultValue={state.values?.email ?? invite?.email} error={state.fieldErrors?.email} />
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
