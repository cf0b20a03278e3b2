"use client";
// Admin review of one user: their conversations are listed by date only; each
// opens read-only after the admin gives a reason, which the user will see.
// Memories the same way. Deleting the account needs the user's email typed.
import { useState, useTransition } from "react";
import { toast } from "sonner";
import {
  deleteUserAction,
  reviewAttachmentAction,
  reviewMemoriesAction,
  reviewThreadAction,
} from "@/app/(app)/admin/actions";
import type { ThreadView } from "@/lib/chat/threads";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { LongText } from "@/components/chat/long-text";
import { count } from "@/lib/text/plural";
import { LocalDate } from "@/components/ui/local-date";

type ThreadRow = { id: string; createdAt: string; lastActivityAt: string; archived: boolean; items: number };
type Memory = {
  id: string;
  text: string;
  kind: string;
  status: string;
  source: string;
  pinned: boolean;
  updatedAt: string;
};
type Target = { kind: "thread"; id: string } | { kind: "memories" };

function ReasonForm({
  label,
  onSubmit,
  pending,
  onCancel,
}: {
  label: string;
  pending: boolean;
  onSubmit: (reason: string) => void;
  onCancel: () => void;
}) {
  const [reason, setReason] = useState("");
  return (
    <form
      className="grid gap-2 rounded-md border border-border bg-muted/40 p-3"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(reason);
      }}
    >
      <Label htmlFor="review-reason">Reason for opening {label} (the user will see it)</Label>
      <Input
        id="review-reason"
        value={reason}
        onChange={(e) => setReason(e.target.value)}
        maxLength={500}
        autoFocus
        placeholder="e.g. Abuse report #123"
      />
      <div className="flex gap-2">
        <Button type="submit" size="sm" disabled={pending || reason.trim().length < 5}>
          {pending ? "Opening…" : "Record reason and open"}
        </Button>
        <Button type="button" size="sm" variant="ghost" onClick={onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

type OpenedFile = { name: string; kind: string; text: string | null; picture: string | null };

/** A file of the conversation, opened under the reason the thread was opened with (each opening is audited). */
function ReviewFile({ file, reason }: { file: { id: string; name: string; bytes: number }; reason: string }) {
  const [opened, setOpened] = useState<OpenedFile | null>(null);
  const [pending, start] = useTransition();
  return (
    <div className="grid gap-1 text-xs" data-testid="review-file">
      <div className="flex items-center gap-2">
        <span className="font-medium">{file.name}</span>
        <span className="text-muted-foreground">{Math.max(1, Math.round(file.bytes / 1024))} KB</span>
        {!opened && (
          <Button
            type="button"
            size="sm"
            variant="outline"
            disabled={pending}
            onClick={() =>
              start(async () => {
                const r = await reviewAttachmentAction({ attachmentId: file.id, reason });
                if (!r.ok) return void toast.error(r.error);
                setOpened(r.data);
              })
            }
          >
            Open (recorded)
          </Button>
        )}
      </div>
      {opened?.text !== null && opened?.text !== undefined && (
        <pre className="max-h-64 overflow-auto whitespace-pre-wrap break-words rounded border border-border p-2">
          {opened.text}
        </pre>
      )}
      {opened?.picture && (
        // eslint-disable-next-line @next/next/no-img-element -- a data URL the audited action returned
        <img src={opened.picture} alt={opened.name} className="max-h-64 max-w-full rounded border border-border" />
      )}
    </div>
  );
}

type ReviewedThread = ThreadView & { members?: Array<{ email: string; name: string | null; role: string }> | null };

function ReadOnlyThread({ view, reason }: { view: ReviewedThread; reason: string }) {
  return (
    <article
      aria-label="Conversation (read-only)"
      className="grid gap-3 rounded-lg border border-border p-4"
      data-testid="review-thread"
    >
      <h3 className="font-medium">
        {view.thread.title ?? "Untitled"} <span className="text-xs font-normal text-muted-foreground">(read-only)</span>
      </h3>
      {(view.thread.project || view.thread.via) && (
        <p className="text-xs text-muted-foreground" data-testid="review-thread-place">
          {view.thread.project && <>In project “{view.thread.project.name}”</>}
          {view.thread.project && view.thread.via && " · "}
          {view.thread.via && <>via {view.thread.via}</>}
        </p>
      )}
      {view.members && (
        <p className="text-xs text-muted-foreground" data-testid="review-thread-members">
          A shared project. Members: {view.members.map((m) => `${m.name ?? m.email} (${m.role})`).join(", ")}. Only this
          chat&apos;s author is told of this read.
        </p>
      )}
      {view.items.length === 0 && <p className="text-sm text-muted-foreground">This conversation is empty.</p>}
      {view.items.map((i) => (
        <div key={i.id} className={i.role === "user" ? "rounded-md bg-muted px-3 py-2" : "px-3 py-1"}>
          <div className="text-xs font-medium uppercase text-muted-foreground">
            {i.role === "tool" ? `tool: ${i.toolName}` : i.role}
          </div>
          {i.role === "tool" ? (
            <pre className="overflow-x-auto whitespace-pre-wrap break-words text-xs">{i.content}</pre>
          ) : (
            <LongText
              text={i.content || (i.toolCalls?.length ? `(called ${i.toolCalls.map((c) => c.name).join(", ")})` : "")}
            />
          )}
          {i.attachments.map((f) => (
            <ReviewFile key={f.id} file={f} reason={reason} />
          ))}
        </div>
      ))}
    </article>
  );
}

export function UserReview({
  user,
  threads,
  accessEnabled,
  isSelf,
}: {
  user: { id: string; email: string };
  threads: ThreadRow[];
  accessEnabled: boolean;
  isSelf: boolean;
}) {
  const [target, setTarget] = useState<Target | null>(null);
  const [view, setView] = useState<ReviewedThread | null>(null);
  const [reviewReason, setReviewReason] = useState("");
  const [memories, setMemories] = useState<Memory[] | null>(null);
  const [pending, start] = useTransition();
  const [confirmEmail, setConfirmEmail] = useState("");
  const [deleteReason, setDeleteReason] = useState("");

  const open = (reason: string) =>
    start(async () => {
      if (!target) return;
      if (target.kind === "thread") {
        const r = await reviewThreadAction({ threadId: target.id, reason });
        if (!r.ok) return void toast.error(r.error);
        setView(r.data);
        setReviewReason(reason);
        setMemories(null);
      } else {
        const r = await reviewMemoriesAction({ userId: user.id, reason });
        if (!r.ok) return void toast.error(r.error);
        setMemories(r.data);
        setView(null);
      }
      setTarget(null);
    });

  return (
    <div className="grid gap-6">
      {!accessEnabled && (
        <p className="rounded-md border border-border p-3 text-sm" role="note">
          Admin access to users&apos; conversations and memories is turned off on this deployment
          (MNEMO_ADMIN_THREAD_ACCESS=off).
        </p>
      )}
      <section aria-labelledby="threads-heading" className="grid gap-2">
        <h3 id="threads-heading" className="font-medium">
          Conversations
        </h3>
        {threads.length === 0 ? (
          <p className="text-sm text-muted-foreground">No conversations.</p>
        ) : (
          <ul className="grid gap-1 text-sm">
            {threads.map((t) => (
              <li key={t.id} className="grid gap-2">
                <div className="flex flex-wrap items-center justify-between gap-2 rounded-md border border-border px-3 py-2">
                  <span>
                    Started <LocalDate value={t.createdAt} time /> · last active{" "}
                    <LocalDate value={t.lastActivityAt} time /> · {count(t.items, "message")}
                    {t.archived ? " · archived" : ""}
                  </span>
                  <Button
                    size="sm"
                    variant="outline"
                    disabled={!accessEnabled || pending}
                    onClick={() => setTarget({ kind: "thread", id: t.id })}
                    aria-label={`Open conversation started ${t.createdAt.slice(0, 16).replace("T", " ")} UTC`}
                  >
                    Open…
                  </Button>
                </div>
                {target?.kind === "thread" && target.id === t.id && (
                  <ReasonForm
                    label="this conversation"
                    pending={pending}
                    onSubmit={open}
                    onCancel={() => setTarget(null)}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      {view && <ReadOnlyThread view={view} reason={reviewReason} />}

      <section aria-labelledby="memories-heading" className="grid gap-2">
        <div className="flex items-center justify-between gap-2">
          <h3 id="memories-heading" className="font-medium">
            Memories
          </h3>
          <Button
            size="sm"
            variant="outline"
            disabled={!accessEnabled || pending}
            onClick={() => setTarget({ kind: "memories" })}
          >
            View memories…
          </Button>
        </div>
        {target?.kind === "memories" && (
          <ReasonForm label="this user's memories" pending={pending} onSubmit={open} onCancel={() => setTarget(null)} />
        )}
        {memories && (
          <ul className="grid gap-1 text-sm" data-testid="review-memories">
            {memories.length === 0 && <li className="text-muted-foreground">No memories.</li>}
            {memories.map((m) => (
              <li key={m.id} className="rounded-md border border-border px-3 py-2">
                {m.text}{" "}
                <span className="text-xs text-muted-foreground">
                  ({m.kind}, {m.source}, {m.status}
                  {m.pinned ? ", pinned" : ""})
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>

      {!isSelf && (
        <section
          aria-labelledby="delete-user-heading"
          className="grid max-w-md gap-2 rounded-lg border border-destructive/40 p-4"
        >
          <h3 id="delete-user-heading" className="font-medium">
            Delete this account
          </h3>
          <p className="text-sm text-muted-foreground">
            Deletes the account and all its data in one step. It cannot be undone.
          </p>
          <form
            className="grid gap-2"
            onSubmit={(e) => {
              e.preventDefault();
              start(async () => {
                const r = await deleteUserAction({ userId: user.id, confirmEmail, reason: deleteReason });
                if (!r.ok) return void toast.error(r.error);
                toast.success(r.data.message ?? "Deleted.");
                // A full load: the deleted user's page and every cached view of them are gone.
                window.location.assign(new URL("/admin", window.location.href));
              });
            }}
          >
            <Label htmlFor="delete-user-reason">Reason</Label>
            <Input
              id="delete-user-reason"
              value={deleteReason}
              onChange={(e) => setDeleteReason(e.target.value)}
              maxLength={500}
            />
            <Label htmlFor="delete-user-email">Type {user.email} to confirm</Label>
            <Input
              id="delete-user-email"
              value={confirmEmail}
              onChange={(e) => setConfirmEmail(e.target.value)}
              autoComplete="off"
            />
            <div>
              <Button
                type="submit"
                variant="destructive"
                size="sm"
                disabled={pending || confirmEmail.trim().toLowerCase() !== user.email}
              >
                Delete account
              </Button>
            </div>
          </form>
        </section>
      )}
    </div>
  );
}
