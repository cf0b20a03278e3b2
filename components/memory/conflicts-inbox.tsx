"use client";
// Conflicts the user decides: two things they said that cannot both be true.
// "On 3 May you said … ; on 9 June, … . Which is true now?"
import type { Conflict } from "@/lib/memory/conflicts";
import type { Result } from "@/lib/http/action";
import { settleConflictAction } from "@/app/(app)/settings/memory/actions";
import { Button } from "@/components/ui/button";
import { LocalDate } from "@/components/ui/local-date";

export function ConflictsInbox({
  conflicts,
  busy,
  act,
}: {
  conflicts: Conflict[];
  busy: boolean;
  act: (fn: () => Promise<Result<unknown>>, ok?: string) => void;
}) {
  if (!conflicts.length) return null;
  return (
    <section
      aria-labelledby="conflicts-heading"
      className="grid gap-3 rounded-lg border border-amber-500/40 bg-amber-500/5 p-4"
      data-testid="conflicts"
    >
      <div>
        <h2 id="conflicts-heading" className="font-medium">
          {conflicts.length === 1 ? "One thing to settle" : `${conflicts.length} things to settle`}
        </h2>
        <p className="text-sm text-muted-foreground">
          You told Mnemo two things that cannot both be true. Until you choose, both are remembered.
        </p>
      </div>
      <ul className="grid gap-3">
        {conflicts.map(({ a, b }) => (
          <li key={`${a.id}:${b.id}`} className="grid gap-2 text-sm" data-testid="conflict">
            <p>
              On <LocalDate value={a.createdAt} /> you said “{a.text}”; on <LocalDate value={b.createdAt} />, “{b.text}
              ”. Which is true now?
            </p>
            <div className="flex flex-wrap gap-2">
              <Button
                size="sm"
                variant="outline"
                disabled={busy}
                onClick={() =>
                  act(
                    () => settleConflictAction({ memoryId: b.id, otherId: a.id, keep: "memory" }),
                    "Kept the newer one; the other is archived.",
                  )
                }
              >
                Keep “{b.text}”
              </Button>
              <Button
                size="sm"
                variant="outline"
                disabled={busy}
                onClick={() =>
                  act(
                    () => settleConflictAction({ memoryId: a.id, otherId: b.id, keep: "memory" }),
                    "Kept the older one; the other is archived.",
                  )
                }
              >
                Keep “{a.text}”
              </Button>
              <Button
                size="sm"
                variant="ghost"
                disabled={busy}
                onClick={() =>
                  act(() => settleConflictAction({ memoryId: a.id, otherId: b.id, keep: "both" }), "Both kept.")
                }
              >
                Both are true
              </Button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
