"use client";
// Change (or set) the password: current, new, and the new one again.
import { useState, useTransition } from "react";
import { useRouter } from "next/navigation";
import { changePasswordAction } from "@/app/(app)/settings/password/actions";
import { Button } from "@/components/ui/button";

const field =
  "h-9 w-full rounded-md border border-input bg-background px-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";

export function PasswordForm({ hasPassword, minLength }: { hasPassword: boolean; minLength: number }) {
  const router = useRouter();
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  return (
    <form
      className="grid gap-3"
      onSubmit={(e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget);
        const value = (k: string) => String(form.get(k) ?? "");
        setError(null);
        start(async () => {
          const r = await changePasswordAction({
            current: hasPassword ? value("current") : undefined,
            next: value("next"),
            confirm: value("confirm"),
          });
          if (!r.ok) return setError(r.error);
          setDone(true);
          router.push("/");
          router.refresh();
        });
      }}
    >
      {hasPassword && (
        <label className="grid gap-1 text-sm">
          Current password
          <input name="current" type="password" autoComplete="current-password" required className={field} />
        </label>
      )}
      <label className="grid gap-1 text-sm">
        New password
        <input
          name="next"
          type="password"
          autoComplete="new-password"
          required
          minLength={minLength}
          className={field}
        />
      </label>
      <label className="grid gap-1 text-sm">
        New password again
        <input
          name="confirm"
          type="password"
          autoComplete="new-password"
          required
          minLength={minLength}
          className={field}
        />
      </label>
      {error && (
        <p className="text-sm text-destructive" role="alert">
          {error}
        </p>
      )}
      {done && (
        <p className="text-sm text-muted-foreground" role="status">
          Password changed.
        </p>
      )}
      <div>
        <Button type="submit" disabled={pending}>
          {pending ? "Saving…" : "Save password"}
        </Button>
      </div>
    </form>
  );
}
