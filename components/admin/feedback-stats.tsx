// 👍/👎 per model and week (content-free), as a table with a small bar for the
// share of good ratings.
import type { FeedbackWeek } from "@/lib/admin/feedback-stats";

export function FeedbackStats({ rows }: { rows: FeedbackWeek[] }) {
  return (
    <section aria-labelledby="feedback-heading" className="grid gap-2">
      <h2 id="feedback-heading" className="text-lg font-medium">
        Answer ratings
      </h2>
      {rows.length === 0 ? (
        <p className="text-sm text-muted-foreground">No ratings in the last 12 weeks.</p>
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full min-w-[24rem] text-sm" data-testid="feedback-stats">
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
                    <td className="px-3 py-1">{r.model}</td>
                    <td className="px-3 py-1">{new Date(r.week).toISOString().slice(0, 10)}</td>
                    <td className="px-3 py-1 text-right tabular-nums">{r.up}</td>
                    <td className="px-3 py-1 text-right tabular-nums">{r.down}</td>
                    <td className="px-3 py-1">
                      <span className="inline-flex items-center gap-2">
                        <span className="h-2 w-24 overflow-hidden rounded-full bg-muted" aria-hidden>
                          <span className="block h-full bg-primary" style={{ width: `${Math.round(share * 100)}%` }} />
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
      )}
    </section>
  );
}
