// Background job health for admins: counts per kind and state, and the newest
// failures with their error (job payloads hold ids only; no user content).
import type { queueHealth } from "@/lib/jobs/queue";

type Health = Awaited<ReturnType<typeof queueHealth>>;
const STATES = ["queued", "running", "done", "failed"] as const;

function formatWait(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 360) / 10} h`;
}

export function JobHealth({ health }: { health: Health }) {
  const kinds = [...new Set(health.counts.map((c) => c.kind))].sort();
  const count = (kind: string, status: string) =>
    health.counts.find((c) => c.kind === kind && c.status === status)?.count ?? 0;
  return (
    <section aria-labelledby="jobs-heading" className="grid gap-2">
      <h2 id="jobs-heading" className="text-lg font-medium">
        Background jobs
      </h2>
      {kinds.length === 0 ? (
        <p className="text-sm text-muted-foreground">
          No background work yet. Titles, summaries and memory learning appear here after answers.
        </p>
      ) : (
        <div className="relative overflow-x-auto">
          <table className="stack-on-phone w-full text-sm sm:min-w-[24rem]" data-testid="job-counts">
            <thead className="text-left text-muted-foreground">
              <tr>
                <th className="px-3 py-1 font-medium">Kind</th>
                {STATES.map((s) => (
                  <th key={s} className="px-3 py-1 text-right font-medium">
                    {s}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {kinds.map((k) => (
                <tr key={k} className="border-t border-border">
                  <td data-label="Kind" className="px-3 py-1">
                    {k}
                  </td>
                  {STATES.map((s) => (
                    <td
                      key={s}
                      data-label={s}
                      className={`px-3 py-1 text-right tabular-nums ${s === "failed" && count(k, s) ? "font-medium text-destructive" : ""}`}
                    >
                      {count(k, s)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {health.oldestDueSeconds > 0 && (
        <p className="text-sm" data-testid="job-lag">
          The oldest job ready to run has waited {formatWait(health.oldestDueSeconds)}.
          {health.oldestDueSeconds >= 60 && (
            <span className="text-muted-foreground">
              {" "}
              Learning and titles lag behind the chats; raise <code>MNEMO_JOB_LANES</code> or run more workers (
              <code>npm run worker</code>).
            </span>
          )}
        </p>
      )}
      {health.failures.length > 0 && (
        <details className="text-sm">
          <summary className="cursor-pointer">Recent failures and retries ({health.failures.length})</summary>
          <ul className="mt-2 grid gap-1">
            {health.failures.map((f) => (
              <li key={f.id} className="break-words">
                <span className="font-medium">{f.kind}</span> · {f.status} · attempt {f.attempts} of {f.maxAttempts} ·{" "}
                {f.updatedAt.toISOString().replace("T", " ").slice(0, 19)} UTC
                {f.lastError ? <span className="text-muted-foreground"> · {f.lastError.slice(0, 300)}</span> : null}
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
