// 👍/👎 per model and week (content-free): a small chart of the share of good
// ratings over the weeks for each model, then the table behind it.
import type { FeedbackWeek } from "@/lib/admin/feedback-stats";
import { LocalDate } from "@/components/ui/local-date";

const W = 240;
const H = 48;

/** One model's good-rating share per week as a line (weeks without ratings are skipped). */
function ShareChart({ model, rows }: { model: string; rows: FeedbackWeek[] }) {
  const weeks = rows.map((r) => ({ at: new Date(r.week).getTime(), share: r.up / Math.max(1, r.up + r.down) }));
  const first = Math.min(...weeks.map((w) => w.at));
  const span = Math.max(1, Math.max(...weeks.map((w) => w.at)) - first);
  const pts = weeks.map(
    (w) => [weeks.length === 1 ? W / 2 : 4 + ((w.at - first) / span) * (W - 8), 4 + (1 - w.share) * (H - 8)] as const,
  );
  const label = `${model}: share of good ratings by week: ${weeks.map((w) => `${Math.round(w.share * 100)}%`).join(", ")}`;
  return (
    <figure className="grid gap-1 text-xs text-muted-foreground">
      <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="rounded bg-muted/50">
        <line x1={0} x2={W} y1={H / 2} y2={H / 2} className="stroke-border" strokeDasharray="2 3" />
        <polyline
          points={pts.map((p) => p.join(",")).join(" ")}
          fill="none"
          className="stroke-primary"
          strokeWidth={2}
        />
        {pts.map(([x, y], i) => (
          <circle key={i} cx={x} cy={y} r={2.5} className="fill-primary" />
        ))}
      </svg>
      <figcaption>
        {model} · {Math.round(weeks.at(-1)!.share * 100)}% good in the latest week
      </figcaption>
    </figure>
  );
}

export function FeedbackStats({ rows }: { rows: FeedbackWeek[] }) {
  return (
    <section aria-labelledby="feedback-heading" className="grid gap-2">
      <h2 id="feedback-heading" className="text-lg font-medium">
        Answer ratings
      </h2>
      {rows.length === 0 ? (
        <p className="text-sm text-muted-foreground">No ratings in the last 12 weeks.</p>
      ) : (
        <>
          <div className="flex flex-wrap gap-4" data-testid="feedback-chart">
            {[...new Set(rows.map((r) => r.model))].map((m) => (
              <ShareChart key={m} model={m} rows={rows.filter((r) => r.model === m)} />
            ))}
          </div>
          <div className="relative overflow-x-auto">
            <table className="stack-on-phone w-full text-sm sm:min-w-[24rem]" data-testid="feedback-stats">
              <thead className="text-left text-muted-foreground">
                <tr>
                  <th className="px-3 py-1 font-medium">Model</th>
                  <th className="px-3 py-1 font-medium">Week of</th>
                  <th className="px-3 py-1 text-right font-medium">👍</th>
                  <th className="px-3 py-1 text-right font-medium">👎</th>
                  <th className="px-3 py-1 font-medium">Good share</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => {
                  const share = r.up + r.down ? r.up / (r.up + r.down) : 0;
                  return (
                    <tr key={`${r.model}-${new Date(r.week).toISOString()}`} className="border-t border-border">
                      <td data-label="Model" className="px-3 py-1">
                        {r.model}
                      </td>
                      <td data-label="Week of" className="px-3 py-1">
                        <LocalDate value={r.week} />
                      </td>
                      <td data-label="👍" className="px-3 py-1 text-right tabular-nums">
                        {r.up}
                      </td>
                      <td data-label="👎" className="px-3 py-1 text-right tabular-nums">
                        {r.down}
                      </td>
                      <td data-label="Good share" className="px-3 py-1">
                        <span className="inline-flex items-center gap-2">
                          <span className="h-2 w-24 overflow-hidden rounded-full bg-muted" aria-hidden>
                            <span
                              className="block h-full bg-primary"
                              style={{ width: `${Math.round(share * 100)}%` }}
                            />
                          </span>
                          <span className="tabular-nums">{Math.round(share * 100)}%</span>
                        </span>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
