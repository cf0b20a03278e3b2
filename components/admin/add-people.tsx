"use client";
// Admins bring people in: an invitation link (for MNEMO_REGISTRATION=invite),
// or an account with a temporary password (any mode). Either is shown once.
import { useState, useTransition } from "react";
import { createAccountAction, inviteUserAction } from "@/app/(app)/admin/actions";
import { Button } from "@/components/ui/button";
import { OneTimeSecret, type OneTimeResult } from "./one-time-secret";

export function AddPeople({ mode }: { mode: "open" | "invite" | "closed" }) {
  const [email, setEmail] = useState("");
  const [pending, start] = useTransition();
  const [result, setResult] = useState<OneTimeResult | null>(null);
  const run = (kind: "invite" | "account") =>
    start(async () => {
      if (kind === "invite") {
        const r = await inviteUserAction({ email });
        setResult(
          r.ok
            ? {
                ok: true,
                text: `Invitation link for ${email} (valid 7 days, once; shown only now):`,
                secret: `${window.location.origin}${r.data.link}`,
              }
            : { ok: false, text: r.error },
        );
      } else {
        const r = await createAccountAction({ email });
        setResult(
          r.ok
            ? {
                ok: true,
                text: `Account created for ${email}. Temporary password (shown only now; they choose their own at the first sign-in):`,
                secret: r.data.password,
              }
            : { ok: false, text: r.error },
        );
      }
    });
  return (
    <section aria-labelledby="add-heading" className="grid gap-2 rounded-lg border border-border p-4">
      <h2 id="add-heading" className="text-lg font-medium">
        Add people
      </h2>
      <p className="text-sm text-muted-foreground" data-testid="registration-mode">
        Registration is{" "}
        {mode === "open" ? "open to anyone who reaches this server" : mode === "invite" ? "by invitation" : "closed"}{" "}
        (MNEMO_REGISTRATION).
      </p>
      <form
        className="flex flex-wrap items-end gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          run(mode === "invite" ? "invite" : "account");
        }}
      >
        <label className="grid gap-1 text-sm">
          Email
          <input
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            className="h-9 w-64 rounded-md border border-input bg-background px-2 text-sm"
          />
        </label>
        {mode === "invite" && (
          <Button type="submit" disabled={pending || !email}>
            Create invitation link
          </Button>
        )}
        <Button
          type={mode === "invite" ? "button" : "submit"}
          variant="outline"
          disabled={pending || !email}
          onClick={mode === "invite" ? () => run("account") : undefined}
        >
          Create account
        </Button>
      </form>
      <OneTimeSecret result={result} testId="add-people-secret" />
    </section>
  );
}
