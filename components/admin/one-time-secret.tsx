// The outcome of an admin action that reveals a secret once (an invitation
// link, a temporary password): a sentence, then the secret to copy.
export type OneTimeResult = { ok: boolean; text: string; secret?: string };

export function OneTimeSecret({ result, testId }: { result: OneTimeResult | null; testId: string }) {
  if (!result) return null;
  return (
    <p className={result.ok ? "text-sm" : "text-sm text-destructive"} role={result.ok ? "status" : "alert"}>
      {result.text}{" "}
      {result.secret && (
        <code className="break-all rounded bg-muted px-1.5 py-0.5 font-mono" data-testid={testId}>
          {result.secret}
        </code>
      )}
    </p>
  );
}
