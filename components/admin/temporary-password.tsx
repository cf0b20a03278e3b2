"use client";
// An admin sets a temporary password for a user who forgot theirs: shown here
// once, to pass on; the user must choose their own at the next sign-in.
import { useState, useTransition } from "react";
import { setTemporaryPasswordAction } from "@/app/(app)/admin/actions";
import { Button } from "@/components/ui/button";
import { OneTimeSecret, type OneTimeResult } from "./one-time-secret";

export function TemporaryPassword({ userId, email }: { userId: string; email: string }) {
  const [pending, start] = useTransition();
  const [result, setResult] = useState<OneTimeResult | null>(null);
  return (
    <div className="grid gap-2 rounded-lg border border-border p-4">
      <h3 className="font-medium">Password</h3>
      <p className="text-sm text-muted-foreground">
        For a user who cannot sign in: a temporary password, shown once. Their other sessions end, and they must choose
        their own password when they sign in.
      </p>
      <div>
        <Button
          variant="outline"
          disabled={pending}
          onClick={() => {
            if (!window.confirm(`Set a temporary password for ${email}? Their current password stops working.`)) return;
            start(async () => {
              const r = await setTemporaryPasswordAction({ userId });
              setResult(
                r.ok
                  ? { ok: true, text: "Temporary password (shown once):", secret: r.data.password }
                  : { ok: false, text: r.error },
              );
            });
          }}
        >
          Set a temporary password
        </Button>
      </div>
      <OneTimeSecret result={result} testId="temporary-password" />
    </div>
  );
}
