"use client";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { LocalDate } from "@/components/ui/local-date";
import {
  addProjectMemoryAction,
  forgetProjectMemoryAction,
  reviewProjectMemoryAction,
  settleProjectConflictAction,
} from "@/app/(app)/p/actions";
import type { ProjectMemoryView } from "@/lib/projects/project-memory";
import type { Conflict } from "@/lib/memory/conflicts";

/** A shared project's memories, each with who taught it; editors add, forget and review them. */
export function ProjectMemories({
  projectId,
  memories,
  conflicts,
  canEdit,
}: {
  projectId: string;
  memories: ProjectMemoryView[];
  conflicts: Conflict[];
  canEdit: boolean;
}) {
  const router = useRouter();
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  async function act(r: Promise<{ ok: true } | { ok: false; error: string }>, done?: string) {
    const res = await r;
    if (!res.ok) return (toast.error(res.error), false);
    if (done) toast.success(done);
    router.refresh();
    return true;
  }
  async function add(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    if (await act(addProjectMemoryAction(projectId, text), "Remembered for the project.")) setText("");
    setBusy(false);
  }
  const pending = memories.filter((m) => m.status === "pending");
  const active = memories.filter((m) => m.status === "active");
  return (
    <section aria-labelledby="project-memories" className="grid grid-cols-[minmax(0,1fr)] gap-3">
      <h2 id="project-memories" className="text-sm font-medium">
        What the project remembers
      </h2>
      {conflicts.length > 0 && (
        <div className="grid gap-2 rounded-md border border-dashed border-border p-3" data-testid="project-conflicts">
          <p className="text-xs font-medium">These say opposite things: which is true now?</p>
          {conflicts.map(({ a, b }) => (
            <div key={a.id} className="grid gap-1 text-sm">
              {[a, b].map((m, i) => (
                <div key={m.id} className="flex items-start gap-2">
                  <p className="min-w-0 flex-1 break-words">{m.text}</p>
                  {canEdit && (
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() =>
                        void act(
                          settleProjectConflictAction(projectId, {
                            memoryId: a.id,
                            otherId: b.id,
                            keep: i === 0 ? "memory" : "other",
                          }),
                          "Kept.",
                        )
                      }
                    >
                      Keep this
                    </Button>
                  )}
                </div>
              ))}
              {canEdit && (
                <Button
                  size="sm"
                  variant="outline"
                  className="justify-self-start"
                  onClick={() =>
                    void act(
                      settleProjectConflictAction(projectId, { memoryId: a.id, otherId: b.id, keep: "both" }),
                      "Both kept.",
                    )
                  }
                >
                  Both are true
                </Button>
              )}
            </div>
          ))}
        </div>
      )}
      {pending.length > 0 && (
        <div className="grid gap-2 rounded-md border border-dashed border-border p-3" data-testid="project-review">
          <p className="text-xs font-medium">Waiting for an editor&apos;s approval</p>
          {pending.map((m) => (
            <MemoryRow key={m.id} m={m}>
              {canEdit && (
                <>
                  <Button
                    size="sm"
                    onClick={() => void act(reviewProjectMemoryAction(projectId, m.id, true), "Approved.")}
                  >
                    Approve
                  </Button>
                  <Button
                    size="sm"
                    variant="ghost"
                    onClick={() => void act(reviewProjectMemoryAction(projectId, m.id, false), "Rejected.")}
                  >
                    Reject
                  </Button>
                </>
              )}
            </MemoryRow>
          ))}
        </div>
      )}
      {active.length ? (
        <ul className="divide-y divide-border rounded-md border border-border" data-testid="project-memory-list">
          {active.map((m) => (
            <li key={m.id}>
              <MemoryRow m={m}>
                {canEdit && (
                  <Button
                    size="sm"
                    variant="ghost"
                    className="text-destructive"
                    aria-label={`Forget: ${m.text}`}
                    onClick={() => void act(forgetProjectMemoryAction(projectId, m.id), "Forgotten.")}
                  >
                    Forget
                  </Button>
                )}
              </MemoryRow>
            </li>
          ))}
        </ul>
      ) : (
        <p className="text-sm text-muted-foreground">
          Nothing yet: what members&apos; chats teach the project shows here.
        </p>
      )}
      {canEdit && (
        <form onSubmit={add} className="flex gap-2" aria-label="Add a project memory">
          <Input
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="Something everyone's chats here should know"
            maxLength={2000}
            aria-label="New project memory"
          />
          <Button type="submit" disabled={busy || !text.trim()}>
            Add
          </Button>
        </form>
      )}
    </section>
  );
}

function MemoryRow({ m, children }: { m: ProjectMemoryView; children?: React.ReactNode }) {
  const who = m.by ?? "a former member";
  return (
    <div className="flex items-start gap-2 px-3 py-2 text-sm" data-testid="project-memory">
      <div className="min-w-0 flex-1">
        <p className="break-words">{m.text}</p>
        <p className="text-xs text-muted-foreground" data-testid="memory-origin">
          {m.origin === "learned" ? `learned from ${who}'s chat` : `added by ${who}`}, <LocalDate value={m.createdAt} />
        </p>
      </div>
      {children}
    </div>
  );
}
