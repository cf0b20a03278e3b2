"use client";
// Delete the account: typed confirmation plus the password (or, for accounts
// without one, a sign-in within the last 10 minutes). Irreversible. A sole admin chooses who becomes admin; the only
// account is told what happens to the instance.
import { useState, useTransition } from "react";
import { deleteAccountAction } from "@/app/(app)/settings/data/actions";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";

type Succession = {
  soleAdmin: boolean;
  onlyAccount: boolean;
  successors: { id: string; email: string; name: string | null }[];
};

export function DeleteAccount({
  hasPassword,
  phrase,
  succession,
}: {
  hasPassword: boolean;
  phrase: string;
  succession: Succession;
}) {
  const [confirm, setConfirm] = useState("");
  const [password, setPassword] = useState("");
  const [successorId, setSuccessorId] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const needsSuccessor = succession.soleAdmin && !succession.onlyAccount;
  const ready =
    confirm.trim().toLowerCase() === phrase &&
    (!hasPassword || password.length > 0) &&
    (!needsSuccessor || successorId !== "");

  return (
    <form
      className="grid max-w-md gap-3"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        start(async () => {
          const r = await deleteAccountAction({
            confirm,
            password: hasPassword ? password : undefined,
            successorId: needsSuccessor ? successorId : undefined,
          });
          if (r && !r.ok) setError(r.error);
        });
      }}
    >
      {succession.onlyAccount && (
        <p className="text-sm text-muted-foreground" data-testid="delete-only-account">
          You are the only account on this Mnemo. Deleting it leaves the instance with no one: its settings (the model
          connection, registration) stay, and the next person to open Mnemo creates the first account and becomes its
          admin.
        </p>
      )}
      {needsSuccessor && succession.successors.length > 0 && (
        <div className="grid gap-1.5">
          <Label htmlFor="delete-successor">You are the only admin. Who becomes admin?</Label>
          <select
            id="delete-successor"
            value={successorId}
            onChange={(e) => setSuccessorId(e.target.value)}
            className="h-9 rounded-md border border-input bg-background px-2 text-sm"
          >
            <option value="">Choose someone…</option>
            {succession.successors.map((u) => (
              <option key={u.id} value={u.id}>
                {u.name ? `${u.name} (${u.email})` : u.email}
              </option>
            ))}
          </select>
        </div>
      )}
      {needsSuccessor && succession.successors.length === 0 && (
        <p className="text-sm text-muted-foreground">
          You are the only admin and every other account is disabled: enable one under Admin, then choose it here.
        </p>
      )}
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
