"use client";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { LocalDate } from "@/components/ui/local-date";
import {
  cancelInviteAction,
  changeRoleAction,
  inviteMemberAction,
  removeMemberAction,
  setKeepLeaversChatsAction,
  setProjectReviewAction,
  transferOwnershipAction,
} from "@/app/(app)/p/actions";
import type { ProjectRole } from "@/lib/projects/access";
import type { ProjectHistoryEntry, ProjectMemberView } from "@/lib/projects/members";
import type { ProjectInviteView } from "@/lib/projects/invites";
import type { ProjectMemoryView } from "@/lib/projects/project-memory";
import type { Conflict } from "@/lib/memory/conflicts";

/** What a shared project's page shows besides its chats (read on the server, lib/projects/). */
export type ProjectSharing = {
  role: ProjectRole;
  me: string;
  members: ProjectMemberView[];
  /** Invitations waiting for an address without an account (shown to those who may invite). */
  invites: ProjectInviteView[];
  history: ProjectHistoryEntry[];
  memories: ProjectMemoryView[];
  /** Pairs of the project's memories that contradict each other (an editor decides). */
  conflicts: Conflict[];
  keepLeaversChats: boolean;
  review: boolean;
};

const ROLE_HELP: Record<ProjectRole, string> = {
  owner: "everything, including members and deleting the project",
  editor: "chats, memories, instructions; invites editors and viewers",
  viewer: "reads chats and memories",
};

type Run = (what: Promise<{ ok: true } | { ok: false; error: string }>, done?: string) => Promise<boolean>;

function useRun(): Run {
  const router = useRouter();
  return async (what, done) => {
    const r = await what;
    if (!r.ok) {
      toast.error(r.error);
      return false;
    }
    if (done) toast.success(done);
    router.refresh();
    return true;
  };
}

/** The people of a shared project: who is in it as what, inviting, roles, removing, and its history. */
export function ProjectPeople({ projectId, sharing }: { projectId: string; sharing: ProjectSharing }) {
  const run = useRun();
  const owner = sharing.role === "owner";
  // Shown as set at once; put back if the server refuses.
  const [keep, setKeep] = useState(sharing.keepLeaversChats);
  const [review, setReview] = useState(sharing.review);
  async function toggle(
    set: (v: boolean) => void,
    value: boolean,
    save: (v: boolean) => Promise<{ ok: true } | { ok: false; error: string }>,
  ) {
    set(value);
    if (!(await run(save(value), "Saved."))) set(!value);
  }
  return (
    <section aria-labelledby="project-people" className="grid grid-cols-[minmax(0,1fr)] gap-3">
      <h2 id="project-people" className="text-sm font-medium">
        People
      </h2>
      <ul className="divide-y divide-border rounded-md border border-border" data-testid="project-members">
        {sharing.members.map((m) => (
          <li key={m.userId} className="flex flex-wrap items-center gap-2 px-3 py-2 text-sm" data-member={m.email}>
            <span className="min-w-0 flex-1 truncate">
              {m.name ?? m.email}
              {m.name && <span className="ml-1 text-xs text-muted-foreground">{m.email}</span>}
              {m.you && <span className="ml-1 text-xs text-muted-foreground">(you)</span>}
            </span>
            {owner && m.role !== "owner" ? (
              <>
                <select
                  aria-label={`Role of ${m.name ?? m.email}`}
                  value={m.role}
                  onChange={(e) =>
                    void run(
                      changeRoleAction(projectId, m.userId, e.target.value as "editor" | "viewer"),
                      "Role changed.",
                    )
                  }
                  className="h-8 rounded-md border border-input bg-background px-2 text-xs"
                >
                  <option value="editor">editor</option>
                  <option value="viewer">viewer</option>
                </select>
                <Button
                  variant="ghost"
                  size="sm"
                  onClick={() => {
                    if (window.confirm(`Make ${m.name ?? m.email} the owner? You stay on as an editor.`))
                      void run(transferOwnershipAction(projectId, m.userId), "Ownership given.");
                  }}
                >
                  Make owner
                </Button>
                <Button
                  variant="ghost"
                  size="sm"
                  className="text-destructive"
                  onClick={() => {
                    const chats = sharing.keepLeaversChats ? "Their chats stay" : "Their chats in the project go";
                    if (
                      window.confirm(`Remove ${m.name ?? m.email}? ${chats}, and so do the memories only they taught.`)
                    )
                      void run(removeMemberAction(projectId, m.userId), "Removed.");
                  }}
                >
                  Remove
                </Button>
              </>
            ) : (
              <span className="text-xs text-muted-foreground" title={ROLE_HELP[m.role]}>
                {m.role}
              </span>
            )}
          </li>
        ))}
      </ul>
      {sharing.role !== "viewer" && <WaitingInvites projectId={projectId} invites={sharing.invites} run={run} />}
      {sharing.role !== "viewer" && <InviteForm projectId={projectId} />}
      {owner && (
        <div className="grid gap-2 text-sm">
          <label className="flex items-start gap-2">
            <input
              type="checkbox"
              className="mt-0.5 h-4 w-4"
              checked={keep}
              onChange={(e) => void toggle(setKeep, e.target.checked, (v) => setKeepLeaversChatsAction(projectId, v))}
            />
            <span>
              Keep the chats of people who leave
              <span className="block text-xs text-muted-foreground">
                Shown to each member before they leave. The memories only they taught go either way.
              </span>
            </span>
          </label>
          <label className="flex items-start gap-2">
            <input
              type="checkbox"
              className="mt-0.5 h-4 w-4"
              checked={review}
              onChange={(e) => void toggle(setReview, e.target.checked, (v) => setProjectReviewAction(projectId, v))}
              data-testid="project-review-setting"
            />
            <span>
              Hold what the project learns for an editor&apos;s approval
              <span className="block text-xs text-muted-foreground">
                Memories learned from chats wait below until an editor or the owner approves them.
              </span>
            </span>
          </label>
        </div>
      )}
      <details className="text-sm">
        <summary className="cursor-pointer text-muted-foreground">History</summary>
        <ul className="mt-2 grid gap-1 text-xs text-muted-foreground" data-testid="project-history">
          {sharing.history.map((h, i) => (
            <li key={i}>
              <LocalDate value={h.at} /> · {historyLine(h)}
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}

function historyLine(h: ProjectHistoryEntry): string {
  const subject = h.subject ?? "a former member";
  const by = h.actor && h.actor !== h.subject ? ` (by ${h.actor})` : "";
  switch (h.kind) {
    case "joined":
      return `${subject} joined as ${h.role}${by}`;
    case "left":
      return `${subject} left`;
    case "removed":
      return `${subject} was removed${by}`;
    case "deleted":
      return `${subject} deleted their account`;
    case "role":
      return `${subject} became ${h.role}${by}`;
    case "owner":
      return `${subject} became the owner${by}`;
    default:
      return `${subject}: ${h.kind}`;
  }
}

/** Invitations waiting for someone to have an account, each withdrawable. */
function WaitingInvites({ projectId, invites, run }: { projectId: string; invites: ProjectInviteView[]; run: Run }) {
  if (!invites.length) return null;
  return (
    <ul className="grid gap-1 text-sm" aria-label="Invitations waiting" data-testid="project-invites">
      {invites.map((i) => (
        <li
          key={i.email}
          className="flex flex-wrap items-center gap-2 px-3 text-muted-foreground"
          data-invite={i.email}
        >
          <span className="min-w-0 flex-1 break-words">
            {i.email} <span className="text-xs">· invited as {i.role}, waiting for their account until </span>
            <span className="text-xs">
              <LocalDate value={i.expiresAt} />
            </span>
          </span>
          <Button
            variant="ghost"
            size="sm"
            onClick={() => void run(cancelInviteAction(projectId, i.email), "Invitation withdrawn.")}
          >
            Withdraw
          </Button>
        </li>
      ))}
    </ul>
  );
}

function InviteForm({ projectId }: { projectId: string }) {
  const router = useRouter();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"editor" | "viewer">("editor");
  const [busy, setBusy] = useState(false);
  async function invite(e: React.FormEvent) {
    e.preventDefault();
    setBusy(true);
    // What was typed stays when the invite is refused.
    const r = await inviteMemberAction(projectId, { email, role });
    if (r.ok) {
      toast.success(r.data, { duration: 10_000 });
      setEmail("");
      router.refresh();
    } else toast.error(r.error);
    setBusy(false);
  }
  return (
    <form onSubmit={invite} className="flex flex-wrap items-end gap-2" aria-label="Invite someone">
      <div className="grid min-w-48 flex-1 gap-1.5">
        <Label htmlFor="invite-email">Invite by email</Label>
        <Input
          id="invite-email"
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          placeholder="someone@example.com"
          required
        />
      </div>
      <select
        aria-label="Their role"
        value={role}
        onChange={(e) => setRole(e.target.value as "editor" | "viewer")}
        className="h-9 rounded-md border border-input bg-background px-2 text-sm"
      >
        <option value="editor">editor</option>
        <option value="viewer">viewer</option>
      </select>
      <Button type="submit" disabled={busy || !email.trim()}>
        {busy ? "Inviting…" : "Invite"}
      </Button>
    </form>
  );
}
