"use client";
// Delete the account: typed confirmation plus the password (or, for accounts
// without one, a sign-in within the last 10 minutes). Irreversible.
import { useState, useTransition } from "react";
import { deleteAccountAction } from "@/app/(app)/settings/data/actions";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";

export function DeleteAccount({ hasPassword, phrase }: { hasPassword: boolean; phrase: string }) {
  const [confirm, setConfirm] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const ready = confirm.trim().toLowerCase() === phrase && (!hasPassword || password.length > 0);

  return (
    <form
      className="grid max-w-md gap-3"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        start(async () => {
          const r = await deleteAccountAction({ confirm, password: hasPassword ? password : undefined });
          if (r && !r.ok) setError(r.error);
        });
      }}
    >
      <div className="grid gap-1.5">
        <Label htmlFor="delete-confirm">
          Type <span className="font-mono">{phrase}</span> to confirm
        </Label>
        <Input
          id="delete-confirm"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
          autoComplete="off"
          aria-describedby={error ? "delete-error" : undefined}
        />
      </div>
      {hasPassword ? (
        <div className="grid gap-1.5">
          <Label htmlFor="delete-password">Your password</Label>
          <Input
            id="delete-password"
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            autoComplete="current-password"
          />
        </div>
      ) : (
        <p className="text-sm text-muted-foreground">
          You signed up with a provider: sign out and in again first if your last sign-in was more than 10 minutes ago.
        </p>
      )}
      {error && (
        <p id="delete-error" className="text-sm text-destructive" role="alert">
          {error}
        </p>
      )}
      <div>
        <Button type="submit" variant="destructive" disabled={!ready || pending}>
          {pending ? "Deleting…" : "Delete my account and all my data"}
        </Button>
      </div>
    </form>
  );
}
