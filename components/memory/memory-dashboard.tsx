"use client";
import Link from "next/link";
import { useState, useTransition } from "react";
import { toast } from "sonner";
import { Brain, Eye, EyeOff, History, Lock, LockOpen, Pin, PinOff, Trash2 } from "lucide-react";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { cn } from "@/lib/cn";
import {
  addMemoryAction,
  deleteMemoriesAction,
  editMemoryAction,
  forgetMeAction,
  memoryHistoryAction,
  memorySettingsAction,
  muteMemoryAction,
  pinMemoryAction,
  privateMemoryAction,
  purgeMemoriesAction,
  restoreMemoriesAction,
  reviewMemoryAction,
  verifyProcedureAction,
  consolidateNowAction,
} from "@/app/(app)/settings/memory/actions";
import { moveMemoryAction } from "@/app/(app)/p/actions";
import type { Conflict } from "@/lib/memory/conflicts";
import { AboutYou } from "./about-you";
import { ConflictsInbox } from "./conflicts-inbox";
import type { Result } from "@/lib/http/action";
import { ProfileMeter, type ProfileMeterProps } from "./profile-meter";
import { count, formatCount } from "@/lib/text/plural";
import { LocalDate } from "@/components/ui/local-date";

type Mem = {
  id: string;
  text: string;
  kind: string;
  source: string;
  status: string;
  pinned: boolean;
  /** "Don't mention this": kept, never sent to a model. */
  muted?: boolean;
  /** The project it belongs to (null: general memory). */
  projectId?: string | null;
  /** "Private: never sent off this machine". */
  private?: boolean;
  /** When it was true ("from March 2021 until June 2025", "since June 2025"), when that says more than its dates. */
  validity?: string | null;
  /** Its timeline: the past memories it replaced, newest first. */
  before?: Array<{ text: string; span: string }>;
  /** Kept for a while ("remember this for a week"): recall leaves it out after this (ISO). */
  expiresAt?: string | null;
  sourceThreadId: string | null;
  sourceItemId: string | null;
  /** The chat it was learned from was deleted, or the message undone or edited away (lib/memory/provenance.ts). */
  sourceGone: "chat" | "message" | null;
  /** Learned from a rating or a correction of the answer sourceItemId points at. */
  fromFeedback?: boolean;
  /** Where it came from when not from a Mnemo chat (an import's custom instructions). */
  origin?: string | null;
  updatedAt: string;
  lastUsedAt: string | null;
  /** Past the budget: not in the always-included core, so it goes in only when a message is relevant. */
  onlyWhenRelevant?: boolean;
  /** Confirmed by a good rating of an answer that used it. */
  verified?: boolean;
  needsRevalidation?: boolean;
  /** Procedures: the ordered steps. */
  steps?: string[] | null;
  /** Answers that used it, and their ratings. */
  signals?: { answers: number; up: number; down: number } | null;
  /** A change the model proposed to another memory: approve carries it out. */
  proposal?: { op: string; target: string | null } | null;
  /** Why a pending memory waits (its first version's reason). */
  whyPending?: string | null;
};
// What approving a proposal does (lib/memory/writes.ts): "supersede" and "end" keep the old fact as past.
const PROPOSAL_BADGE: Record<string, string> = {
  update: "proposed correction: waiting for review",
  supersede: "proposed change: waiting for review",
  archive: "proposed to forget: waiting for review",
  end: "proposed as no longer true: waiting for review",
};
const PROPOSAL_TARGET: Record<string, string> = {
  update: "Would correct: ",
  supersede: "Would replace (kept as past): ",
  archive: "Would forget: ",
  end: "Would mark as no longer true: ",
};
type Version = {
  id: string;
  oldText: string | null;
  newText: string | null;
  actor: string;
  reason: string;
  createdAt: string;
};
type Filters = { q?: string; kind?: string; source?: string; status?: string; sort: string; scope?: string };
type ProjectRef = { id: string; name: string };

const select =
  "h-9 rounded-md border border-input bg-background px-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";

function MemoryCard({
  m,
  selected,
  onSelect,
  busy,
  act,
  onDelete,
  projects,
  sharedProjects = [],
}: {
  m: Mem;
  projects: ProjectRef[];
  /** Shared projects the user may write in: a memory moved there is the project's, for its members (asked first). */
  sharedProjects?: ProjectRef[];
  selected: boolean;
  onSelect: (v: boolean) => void;
  busy: boolean;
  act: (fn: () => Promise<Result<unknown>>, ok?: string) => void;
  onDelete: (ids: string[]) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [purging, setPurging] = useState(false);
  const [draft, setDraft] = useState(m.text);
  const [history, setHistory] = useState<Version[] | null>(null);
  return (
    <li
      id={`memory-${m.id}`}
      className="rounded-lg border border-border bg-card p-3 target:ring-2 target:ring-ring"
      data-testid="memory"
    >
      {/* On a narrow screen the actions go under the text, which keeps the width to be read. */}
      <div className="flex flex-wrap items-start gap-3 sm:flex-nowrap">
        <input
          type="checkbox"
          className="mt-1 h-4 w-4"
          checked={selected}
          onChange={(e) => onSelect(e.target.checked)}
          aria-label={`Select memory: ${m.text}`}
        />
        <div className="min-w-0 flex-1">
          {editing ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                setEditing(false);
                act(() => editMemoryAction(m.id, draft), "Memory updated.");
              }}
              className="grid gap-2"
            >
              <label htmlFor={`edit-mem-${m.id}`} className="sr-only">
                Memory text
              </label>
              <textarea
                id={`edit-mem-${m.id}`}
                className="min-h-16 w-full rounded-md border border-input bg-background p-2 text-sm"
                value={draft}
                maxLength={500}
                autoFocus
                onChange={(e) => setDraft(e.target.value)}
                onKeyDown={(e) => e.key === "Escape" && setEditing(false)}
              />
              <div className="flex gap-2">
                <Button size="sm" type="submit" disabled={!draft.trim()}>
                  Save
                </Button>
                <Button size="sm" type="button" variant="ghost" onClick={() => setEditing(false)}>
                  Cancel
                </Button>
              </div>
            </form>
          ) : (
            <button
              type="button"
              className="w-full whitespace-pre-wrap break-words text-left text-sm hover:underline"
              onClick={() => {
                setDraft(m.text);
                setEditing(true);
              }}
              aria-label={`Edit memory: ${m.text}`}
            >
              {m.text}
            </button>
          )}
          <div className="mt-2 flex flex-wrap items-center gap-x-3 gap-y-1 text-xs text-muted-foreground">
            <span className="rounded bg-muted px-1.5 py-0.5">{m.kind}</span>
            <span title="Precedence when memories disagree: said by you > written by you > verified > learned, then newer">
              {m.fromFeedback
                ? "learned from your feedback"
                : m.source === "explicit"
                  ? "you said so"
                  : m.source === "manual"
                    ? "added or edited by you"
                    : "learned"}
              {m.verified && m.source === "inferred" ? " · verified" : ""}
            </span>
            {m.needsRevalidation && (
              <span
                className="rounded bg-amber-500/15 px-1.5 py-0.5 text-amber-700 dark:text-amber-400"
                data-testid="needs-revalidation"
              >
                needs re-validation
              </span>
            )}
            {m.signals && m.signals.answers > 0 && (
              <span data-testid="memory-signals">
                used in {count(m.signals.answers, "answer")}
                {m.signals.up ? ` · ${m.signals.up} 👍` : ""}
                {m.signals.down ? ` · ${m.signals.down} 👎` : ""}
              </span>
            )}
            {m.onlyWhenRelevant && (
              <span
                className="rounded bg-muted px-1.5 py-0.5"
                data-testid="only-when-relevant"
                title="Past the memory budget: used when a message is relevant to it"
              >
                only when relevant
              </span>
            )}
            {m.status !== "active" && (
              <span
                className={cn(
                  "rounded px-1.5 py-0.5",
                  m.status === "pending" ? "bg-amber-500/15 text-amber-700 dark:text-amber-400" : "bg-muted",
                )}
              >
                {m.status === "pending"
                  ? m.proposal
                    ? (PROPOSAL_BADGE[m.proposal.op] ?? "proposed change: waiting for review")
                    : "waiting for review"
                  : m.status === "past"
                    ? "no longer true"
                    : "archived"}
              </span>
            )}
            {m.validity && (
              <span className="rounded bg-muted px-1.5 py-0.5" data-testid="memory-validity">
                true {m.validity}
              </span>
            )}
            {m.expiresAt && (
              <span className="rounded bg-muted px-1.5 py-0.5" data-testid="memory-expiry">
                {new Date(m.expiresAt) > new Date() ? "kept until " : "expired "}
                <LocalDate value={m.expiresAt} />
              </span>
            )}
            {m.projectId && (
              <Link
                href={`/p/${m.projectId}`}
                className="rounded bg-sky-500/15 px-1.5 py-0.5 text-sky-800 hover:underline dark:text-sky-300"
                data-testid="memory-scope"
              >
                in {projects.find((p) => p.id === m.projectId)?.name ?? "a project"}
              </Link>
            )}
            {m.private && (
              <span className="rounded bg-muted px-1.5 py-0.5" data-testid="memory-private">
                private: stays on this machine
              </span>
            )}
            {m.muted && (
              <span className="rounded bg-muted px-1.5 py-0.5" data-testid="memory-muted">
                not mentioned to the model
              </span>
            )}
            {m.origin && (
              <span className="rounded bg-muted px-1.5 py-0.5" data-testid="memory-origin">
                from {m.origin}
              </span>
            )}
            <span>
              updated <LocalDate value={m.updatedAt} />
            </span>
            {m.lastUsedAt && (
              <span>
                last used <LocalDate value={m.lastUsedAt} />
              </span>
            )}
            {m.sourceThreadId && m.sourceGone === "chat" && <span data-testid="source-gone">source chat deleted</span>}
            {m.sourceThreadId && m.sourceGone === "message" && (
              <span data-testid="source-gone">
                source message removed ·{" "}
                <Link className="text-primary hover:underline" href={`/c/${m.sourceThreadId}`}>
                  its chat
                </Link>
              </span>
            )}
            {m.sourceThreadId && !m.sourceGone && (
              <Link
                className="text-primary hover:underline"
                href={`/c/${m.sourceThreadId}${m.sourceItemId ? `#item-${m.sourceItemId}` : ""}`}
              >
                source message
              </Link>
            )}
          </div>
          {m.status === "pending" && m.whyPending && (
            <p className="mt-1 text-xs text-muted-foreground" data-testid="pending-why">
              {m.whyPending}.
            </p>
          )}
          {m.proposal && (
            <p className="mt-1 text-sm text-muted-foreground" data-testid="proposal-target">
              {PROPOSAL_TARGET[m.proposal.op] ?? "Would change: "}
              <span className="line-through">{m.proposal.target ?? "(a memory that no longer exists)"}</span>
            </p>
          )}
          {!!m.before?.length && (
            <ol
              className="mt-1 grid gap-0.5 text-xs text-muted-foreground"
              aria-label="Before this"
              data-testid="timeline"
            >
              {m.before.map((b, i) => (
                <li key={i}>
                  Before: <span className="line-through">{b.text}</span> ({b.span})
                </li>
              ))}
            </ol>
          )}
          {m.steps && !editing && (
            <ol className="mt-1 list-decimal pl-5 text-sm text-muted-foreground" aria-label="Steps">
              {m.steps.map((s, i) => (
                <li key={i}>{s}</li>
              ))}
            </ol>
          )}
          {history && (
            <ol className="mt-2 grid gap-1 border-l border-border pl-3 text-xs" aria-label="History">
              {history.map((v) => (
                <li key={v.id}>
                  <span className="text-muted-foreground">
                    <LocalDate value={v.createdAt} time /> · {v.actor} · {v.reason}
                  </span>
                  {v.oldText && v.oldText !== v.newText && <div className="line-through opacity-70">{v.oldText}</div>}
                  {v.newText && v.oldText !== v.newText && <div>{v.newText}</div>}
                </li>
              ))}
            </ol>
          )}
        </div>
        <div className="flex shrink-0 basis-full flex-wrap justify-end gap-1 sm:basis-auto">
          {m.status === "pending" ? (
            <>
              <Button size="sm" disabled={busy} onClick={() => act(() => reviewMemoryAction(m.id, true), "Approved.")}>
                Approve
              </Button>
              <Button
                size="sm"
                variant="outline"
                disabled={busy}
                onClick={() => act(() => reviewMemoryAction(m.id, false), "Rejected.")}
              >
                Reject
              </Button>
            </>
          ) : m.status === "past" ? null : m.status === "archived" ? (
            <>
              <Button
                size="sm"
                variant="outline"
                disabled={busy}
                onClick={() => act(() => restoreMemoriesAction([m.id]), "Restored.")}
              >
                Restore
              </Button>
              <Button
                size="sm"
                variant={purging ? "destructive" : "ghost"}
                disabled={busy}
                onBlur={() => setPurging(false)}
                onClick={() => {
                  if (!purging) return setPurging(true);
                  act(() => purgeMemoriesAction([m.id]), "Deleted for good.");
                }}
              >
                {purging ? "Really delete for good?" : "Delete for good"}
              </Button>
            </>
          ) : (
            <>
              {m.needsRevalidation && (
                <Button
                  size="sm"
                  variant="outline"
                  disabled={busy}
                  onClick={() => act(() => verifyProcedureAction(m.id), "Marked as still right.")}
                >
                  Still right
                </Button>
              )}
              <Button
                size="icon"
                variant="ghost"
                disabled={busy}
                aria-label={m.muted ? "Mention this again" : "Don't mention this"}
                title={m.muted ? "Mention this again" : "Don't mention this (kept, never sent to the model)"}
                aria-pressed={!!m.muted}
                onClick={() =>
                  act(
                    () => muteMemoryAction(m.id, !m.muted),
                    m.muted ? "It may be mentioned again." : "Kept, and never sent to the model.",
                  )
                }
              >
                {m.muted ? <Eye className="h-4 w-4" /> : <EyeOff className="h-4 w-4" />}
              </Button>
              <Button
                size="icon"
                variant="ghost"
                disabled={busy}
                aria-label={m.private ? "Allow sending to any model server" : "Private: never send off this machine"}
                title={m.private ? "Allow sending to any model server" : "Private: never send off this machine"}
                aria-pressed={!!m.private}
                onClick={() =>
                  act(
                    () => privateMemoryAction(m.id, !m.private),
                    m.private ? "It may go to any model server again." : "Private: it stays on this machine.",
                  )
                }
              >
                {m.private ? <LockOpen className="h-4 w-4" /> : <Lock className="h-4 w-4" />}
              </Button>
              <Button
                size="icon"
                variant="ghost"
                disabled={busy}
                aria-label={m.pinned ? "Unpin" : "Pin"}
                aria-pressed={m.pinned}
                onClick={() => act(() => pinMemoryAction(m.id, !m.pinned))}
              >
                {m.pinned ? <PinOff className="h-4 w-4" /> : <Pin className="h-4 w-4" />}
              </Button>
            </>
          )}
          {projects.length + sharedProjects.length > 0 && (
            <select
              aria-label="Move to"
              title="Move to general memory or a project"
              className="h-8 max-w-36 rounded-md border border-input bg-background px-1 text-xs"
              value={m.projectId ?? ""}
              disabled={busy}
              data-testid="memory-move"
              onChange={(e) => {
                const to = e.target.value || null;
                const shared = sharedProjects.find((p) => p.id === to);
                const ask = `Move this memory into the shared project "${shared?.name}"? Its members will see it and their answers there will use it. It cannot be moved back.`;
                if (shared && !window.confirm(ask)) return;
                act(() => moveMemoryAction(m.id, to), to ? "Moved to the project." : "Moved to general memory.");
              }}
            >
              <option value="">General memory</option>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
              {sharedProjects.length > 0 && (
                <optgroup label="Shared projects">
                  {sharedProjects.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name}
                    </option>
                  ))}
                </optgroup>
              )}
            </select>
          )}
          <Button
            size="icon"
            variant="ghost"
            aria-label="History"
            aria-expanded={!!history}
            onClick={async () => {
              if (history) return setHistory(null);
              const r = await memoryHistoryAction(m.id);
              if (r.ok) setHistory(r.data);
              else toast.error(r.error);
            }}
          >
            <History className="h-4 w-4" />
          </Button>
          {m.status !== "archived" && (
            <Button
              size="icon"
              variant="ghost"
              disabled={busy}
              aria-label="Delete memory"
              title="Delete (restorable from the archive)"
              onClick={() => onDelete([m.id])}
            >
              <Trash2 className="h-4 w-4" />
            </Button>
          )}
        </div>
      </div>
    </li>
  );
}

export function MemoryDashboard({
  about,
  conflicts,
  memories,
  related = [],
  filters,
  projects = [],
  sharedProjects = [],
  settings,
  totals,
  meter,
}: {
  about: { text: string | null; at: string | null; edited: boolean };
  memories: Mem[];
  /** With a search: memories that do not contain its words but are about them (the model's own memory search). */
  related?: Mem[];
  filters: Filters;
  projects?: ProjectRef[];
  /** Shared projects the user may write in (a memory can be moved into one). */
  sharedProjects?: ProjectRef[];
  settings: { paused: boolean; review: boolean };
  totals: { count: number; tokens: number; pending: number; muted?: number; inProjects?: number };
  meter: ProfileMeterProps;
  conflicts: Conflict[];
}) {
  const [busy, start] = useTransition();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [confirm, setConfirm] = useState("");
  const [newText, setNewText] = useState("");
  const act = (fn: () => Promise<Result<unknown>>, ok?: string) =>
    start(async () => {
      const r = await fn();
      if (!r.ok) toast.error(r.error);
      else if (ok) toast.success(ok);
    });
  // Deleting puts memories in the archive: the toast's Undo brings them back; the archive deletes for good.
  const remove = (ids: string[]) =>
    start(async () => {
      const r = await deleteMemoriesAction(ids);
      if (!r.ok) return void toast.error(r.error);
      const { archived } = r.data;
      toast.success(ids.length === 1 ? "Memory deleted." : `${count(ids.length, "memory", "memories")} deleted.`, {
        description: archived.length ? "Kept in the archive until you delete it for good." : undefined,
        action: archived.length
          ? { label: "Undo", onClick: () => act(() => restoreMemoriesAction(archived), "Restored.") }
          : undefined,
        duration: 10_000,
      });
    });
  const filtered = !!(filters.q || filters.kind || filters.source || filters.status || filters.scope);
  const card = (m: Mem) => (
    <MemoryCard
      key={`${m.id}-${m.updatedAt}`}
      m={m}
      projects={projects}
      sharedProjects={sharedProjects}
      busy={busy}
      act={act}
      onDelete={remove}
      selected={selected.has(m.id)}
      onSelect={(v) =>
        setSelected((prev) => {
          const n = new Set(prev);
          if (v) n.add(m.id);
          else n.delete(m.id);
          return n;
        })
      }
    />
  );

  return (
    <div className="mx-auto grid max-w-4xl gap-6 px-4 py-8">
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Memory</h1>
          <p className="text-sm text-muted-foreground" data-testid="memory-totals">
            {count(totals.count, "active memory", "active memories")} · {count(totals.tokens, "token")} in the prompt
            {(totals.inProjects ?? 0) > 0 && ` · ${formatCount(totals.inProjects ?? 0)} more in projects`}
            {totals.pending > 0 && ` · ${formatCount(totals.pending)} waiting for review`}
            {(totals.muted ?? 0) > 0 && ` · ${formatCount(totals.muted ?? 0)} not mentioned to the model`}
          </p>
        </div>
        <div className="flex flex-wrap gap-4 text-sm">
          <label className="flex items-center gap-2">
            <input
              type="checkbox"
              className="h-4 w-4"
              checked={settings.paused}
              onChange={(e) =>
                act(
                  () => memorySettingsAction({ paused: e.target.checked }),
                  e.target.checked ? "Learning paused." : "Learning resumed.",
                )
              }
            />
            Pause learning
          </label>
          <label className="flex items-center gap-2">
            <input
              type="checkbox"
              className="h-4 w-4"
              checked={settings.review}
              onChange={(e) => act(() => memorySettingsAction({ review: e.target.checked }))}
            />
            Review learned memories before use
          </label>
        </div>
      </div>
      <AboutYou about={about} busy={busy} act={act} />
      <ConflictsInbox conflicts={conflicts} busy={busy} act={act} />
      <ProfileMeter {...meter} />
      {settings.paused && (
        <Alert>Learning is paused: Mnemo will not save new memories. Existing memories are still used.</Alert>
      )}

      <form className="flex flex-wrap items-end gap-2" role="search" aria-label="Filter memories">
        <div className="grid min-w-48 flex-1 gap-1">
          <label htmlFor="mem-q" className="text-xs text-muted-foreground">
            Search
          </label>
          <input
            id="mem-q"
            name="q"
            defaultValue={filters.q}
            className={cn(select, "w-full")}
            placeholder="Search memories"
          />
        </div>
        {(
          [
            ["kind", "Kind", ["fact", "preference", "procedure", "other"]],
            ["source", "Source", ["explicit", "inferred", "manual", "feedback"]],
            ["status", "Status", ["active", "pending", "archived", "past"]],
          ] as const
        ).map(([name, label, opts]) => (
          <div className="grid gap-1" key={name}>
            <label htmlFor={`mem-${name}`} className="text-xs text-muted-foreground">
              {label}
            </label>
            <select id={`mem-${name}`} name={name} defaultValue={filters[name] ?? ""} className={select}>
              {/* Deleted memories wait in the archive: shown only when asked for. */}
              <option value="">{name === "status" ? "All but archived" : "All"}</option>
              {opts.map((o) => (
                <option key={o} value={o}>
                  {o === "archived" ? "archived (deleted)" : o}
                </option>
              ))}
            </select>
          </div>
        ))}
        {projects.length > 0 && (
          <div className="grid gap-1">
            <label htmlFor="mem-scope" className="text-xs text-muted-foreground">
              Scope
            </label>
            <select id="mem-scope" name="scope" defaultValue={filters.scope ?? ""} className={cn(select, "max-w-44")}>
              <option value="">All</option>
              <option value="general">General memory</option>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="grid gap-1">
          <label htmlFor="mem-sort" className="text-xs text-muted-foreground">
            Sort
          </label>
          <select id="mem-sort" name="sort" defaultValue={filters.sort} className={select}>
            <option value="updated">Recently updated</option>
            <option value="created">Recently added</option>
            <option value="used">Recently used</option>
            <option value="text">A–Z</option>
          </select>
        </div>
        <Button type="submit" variant="secondary">
          Apply
        </Button>
      </form>

      <form
        className="flex flex-wrap gap-2"
        onSubmit={(e) => {
          e.preventDefault();
          const text = newText;
          setNewText("");
          act(() => addMemoryAction(text, "fact"), "Memory added.");
        }}
      >
        <label htmlFor="mem-new" className="sr-only">
          New memory
        </label>
        <input
          id="mem-new"
          value={newText}
          maxLength={500}
          onChange={(e) => setNewText(e.target.value)}
          className={cn(select, "min-w-48 flex-1")}
          placeholder="Add a memory, e.g. “I prefer metric units”"
        />
        <Button type="submit" disabled={!newText.trim() || busy}>
          Add
        </Button>
        <Button
          type="button"
          variant="outline"
          disabled={busy || totals.count < 2}
          onClick={() =>
            act(
              () => consolidateNowAction(),
              "Checking in the background: duplicates are merged, and anything for you to settle appears at the top.",
            )
          }
        >
          Tidy up
        </Button>
      </form>

      {selected.size > 0 && (
        <div className="flex items-center gap-3 rounded-md border border-border bg-muted px-3 py-2 text-sm">
          {selected.size} selected
          <Button
            size="sm"
            variant="destructive"
            disabled={busy}
            onClick={() => {
              const ids = [...selected];
              setSelected(new Set());
              remove(ids);
            }}
          >
            Delete selected
          </Button>
          <Button size="sm" variant="ghost" onClick={() => setSelected(new Set())}>
            Clear selection
          </Button>
        </div>
      )}

      {memories.length === 0 ? (
        <div className="rounded-xl border border-dashed border-border p-8 text-center" data-testid="memory-empty">
          <Brain className="mx-auto h-8 w-8 text-muted-foreground" aria-hidden />
          <h2 className="mt-3 font-medium">
            {filtered ? "No memories match these filters" : "Mnemo doesn’t remember anything about you yet"}
          </h2>
          {!filtered && (
            <p className="mx-auto mt-2 max-w-md text-sm text-muted-foreground">
              As you chat, Mnemo can keep short notes about you — your name, preferences, how you like things done — and
              use them in later conversations. Say “remember that…” to add one, or add it here. Everything it remembers
              shows up on this page, where you can edit or delete it.
            </p>
          )}
        </div>
      ) : (
        <ul className="grid gap-2" aria-label="Memories">
          {memories.map(card)}
        </ul>
      )}

      {related.length > 0 && (
        <section className="grid gap-2" aria-labelledby="related-heading" data-testid="memory-related">
          <div>
            <h2 id="related-heading" className="font-medium">
              Related memories
            </h2>
            <p className="text-sm text-muted-foreground">
              They don’t contain “{filters.q}”, but the model’s memory search finds them for it (other forms of the
              words, and related words).
            </p>
          </div>
          <ul className="grid gap-2" aria-label="Related memories">
            {related.map(card)}
          </ul>
        </section>
      )}

      <section className="grid gap-2 rounded-xl border border-destructive/40 p-4" aria-labelledby="forget-heading">
        <h2 id="forget-heading" className="font-medium text-destructive">
          Forget me
        </h2>
        <p className="text-sm text-muted-foreground">
          Deletes every memory Mnemo has about you, with its history and the summary above. Your conversations are kept,
          but Mnemo no longer recalls or learns from them, nor finishes learning it had queued; what you say or import
          afterwards is remembered as usual. This cannot be undone.
        </p>
        <form
          className="flex flex-wrap items-end gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            const c = confirm;
            setConfirm("");
            act(() => forgetMeAction(c), "All memories deleted.");
          }}
        >
          <div className="grid gap-1">
            <label htmlFor="forget-confirm" className="text-xs text-muted-foreground">
              Type “forget me” to confirm
            </label>
            <input
              id="forget-confirm"
              value={confirm}
              onChange={(e) => setConfirm(e.target.value)}
              className={select}
              autoComplete="off"
            />
          </div>
          <Button type="submit" variant="destructive" disabled={confirm.trim().toLowerCase() !== "forget me" || busy}>
            Forget me
          </Button>
        </form>
      </section>
    </div>
  );
}
