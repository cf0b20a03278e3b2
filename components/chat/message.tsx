"use client";
import { stripCitations } from "@/lib/memory/citation-format";
import { useState } from "react";
import Link from "next/link";
import { Brain, Check, ChevronLeft, ChevronRight, Copy, Info, Pencil, RefreshCw, RotateCcw } from "lucide-react";
import { Button } from "@/components/ui/button";
import { cn } from "@/lib/cn";
import { LongText } from "./long-text";
import { FeedbackControl } from "./feedback-control";
import { AnswerSources, SentAttachments } from "./attachments";
import type { UiItem } from "./types";
import type { PickerModel } from "@/lib/chat/chat-setup";

type Props = {
  item: UiItem;
  busy: boolean;
  onEdit: (item: UiItem, content: string) => void;
  onRegenerate: (item: UiItem, model?: string) => void;
  onSwitch: (itemId: string) => void;
  /** The models on offer (regenerate can pick another one) and their display names. */
  models?: PickerModel[];
  labelOf?: (id: string | null) => string | null;
  /** Whether answers take 👍/👎 here (not in temporary chats). */
  rateable?: boolean;
};

function IconButton({
  label,
  onClick,
  children,
  disabled,
}: {
  label: string;
  onClick: () => void;
  children: React.ReactNode;
  disabled?: boolean;
}) {
  return (
    <button
      type="button"
      aria-label={label}
      title={label}
      disabled={disabled}
      onClick={onClick}
      className="rounded p-1.5 text-muted-foreground hover:bg-accent hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-40"
    >
      {children}
    </button>
  );
}

function BranchSwitcher({ item, onSwitch, busy }: { item: UiItem; onSwitch: (id: string) => void; busy: boolean }) {
  const n = item.siblingIds.length;
  if (n < 2) return null;
  const i = item.siblingIds.indexOf(item.id);
  return (
    <span className="inline-flex items-center text-xs text-muted-foreground" data-testid="branch-switcher">
      <IconButton label="Previous version" disabled={busy || i <= 0} onClick={() => onSwitch(item.siblingIds[i - 1])}>
        <ChevronLeft className="h-3.5 w-3.5" />
      </IconButton>
      <span aria-live="polite">
        {i + 1}/{n}
      </span>
      <IconButton label="Next version" disabled={busy || i >= n - 1} onClick={() => onSwitch(item.siblingIds[i + 1])}>
        <ChevronRight className="h-3.5 w-3.5" />
      </IconButton>
    </span>
  );
}

/** What a memory tool call did, from its result: saved, or only proposed for the user's approval, or nothing. */
export function toolCallLabel(name: string, result?: string): string {
  let r: Record<string, unknown> = {};
  try {
    r = result ? JSON.parse(result) : {};
  } catch {}
  const count = (k: string) => (typeof r[k] === "number" ? (r[k] as number) : 0);
  switch (name) {
    case "remember":
      if (r.proposedForReview) return "Memory waiting for your review";
      if (r.alreadyKnown) return "Already in memory";
      return r.error ? "Not saved to memory" : "Saved to memory";
    case "update_memory":
      if (r.proposedForReview) return "Memory change waiting for your review";
      return r.error ? "Memory not changed" : "Updated a memory";
    case "forget":
      if (!result) return "Forgot from memory";
      if (count("archived")) return "Forgot from memory";
      return count("proposedForReview") ? "Forgetting waits for your review" : "Nothing forgotten";
    case "search_memory":
      return "Searched memory";
    default:
      return name;
  }
}

export function Message({
  item,
  busy,
  onEdit,
  onRegenerate,
  onSwitch,
  rateable = false,
  models = [],
  labelOf = (id) => id,
}: Props) {
  const [copied, setCopied] = useState(false);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(item.content);
  const [showUsage, setShowUsage] = useState(false);
  const copy = async () => {
    await navigator.clipboard?.writeText(item.content).catch(() => {});
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };

  if (item.role === "tool") {
    return (
      <details
        id={`item-${item.id}`}
        className="scroll-mt-16 rounded-md border border-border bg-muted/40 px-3 py-2 text-xs text-muted-foreground"
        data-testid="tool-note"
      >
        <summary className="cursor-pointer select-none">
          Tool: <span className="font-mono">{item.toolName ?? "tool"}</span> (imported)
        </summary>
        <pre className="mt-2 max-h-80 overflow-auto whitespace-pre-wrap break-words font-mono">{item.content}</pre>
      </details>
    );
  }

  if (item.role === "user") {
    return (
      <div
        id={`item-${item.id}`}
        className="group flex scroll-mt-16 flex-col items-end gap-1 rounded-md data-[found=true]:ring-2 data-[found=true]:ring-primary"
        data-testid="message-user"
        data-item-id={item.id}
      >
        {editing ? (
          <form
            className="w-full max-w-[85%] rounded-2xl border border-border bg-card p-2"
            onSubmit={(e) => {
              e.preventDefault();
              if (!draft.trim()) return;
              setEditing(false);
              onEdit(item, draft);
            }}
          >
            <label htmlFor={`edit-${item.id}`} className="sr-only">
              Edit message
            </label>
            <textarea
              id={`edit-${item.id}`}
              className="min-h-20 w-full resize-y rounded-md bg-transparent p-2 text-sm focus-visible:outline-none"
              value={draft}
              autoFocus
              onChange={(e) => setDraft(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Escape") setEditing(false);
              }}
            />
            <div className="flex justify-end gap-2">
              <Button type="button" variant="ghost" size="sm" onClick={() => setEditing(false)}>
                Cancel
              </Button>
              <Button type="submit" size="sm" disabled={!draft.trim()}>
                Save &amp; send
              </Button>
            </div>
          </form>
        ) : (
          <>
            <SentAttachments files={item.attachments ?? []} />
            {(item.content || !item.attachments?.length) && (
              <div className="max-w-[85%] whitespace-pre-wrap break-words rounded-2xl bg-accent px-4 py-2 text-sm text-accent-foreground">
                <LongText text={item.content} markdown={false} />
              </div>
            )}
          </>
        )}
        <div className="flex items-center gap-0.5 opacity-70 transition-opacity focus-within:opacity-100 group-hover:opacity-100">
          <BranchSwitcher item={item} onSwitch={onSwitch} busy={busy} />
          <IconButton label="Copy message" onClick={copy}>
            {copied ? <Check className="h-3.5 w-3.5" /> : <Copy className="h-3.5 w-3.5" />}
          </IconButton>
          <IconButton
            label="Edit message"
            disabled={busy}
            onClick={() => {
              setDraft(item.content);
              setEditing(true);
            }}
          >
            <Pencil className="h-3.5 w-3.5" />
          </IconButton>
        </div>
      </div>
    );
  }

  const streaming = item.status === "streaming";
  if (item.toolCalls?.length && !item.content && !streaming) {
    return (
      <div className="flex flex-wrap gap-2" data-testid="tool-calls">
        {item.toolCalls.map((c, i) => (
          <Link
            key={`${c.id}-${i}`}
            href="/settings/memory"
            className="inline-flex items-center gap-1.5 rounded-full border border-border bg-muted px-2.5 py-1 text-xs text-muted-foreground hover:text-foreground"
          >
            <Brain className="h-3.5 w-3.5" aria-hidden /> {toolCallLabel(c.name, c.result)}
          </Link>
        ))}
      </div>
    );
  }
  return (
    <div
      id={`item-${item.id}`}
      className="group flex scroll-mt-16 flex-col gap-1 rounded-md data-[found=true]:ring-2 data-[found=true]:ring-primary"
      data-testid="message-assistant"
      data-status={item.status}
      data-item-id={item.id}
    >
      <div className={cn("text-sm", streaming && !item.content && "text-muted-foreground")}>
        {item.content ? (
          <LongText text={stripCitations(item.content, streaming)} streaming={streaming} />
        ) : streaming ? (
          <span className="animate-pulse">Thinking…</span>
        ) : null}
      </div>
      <AnswerSources sources={item.sources ?? []} />
      {item.status === "stopped" && <p className="text-xs text-muted-foreground">Stopped.</p>}
      {/* On a complete answer, `error` is a warning about it (the model server cut its prompt). */}
      {item.status === "complete" && item.error && (
        <p
          role="note"
          data-testid="answer-warning"
          className="max-w-prose rounded-md border border-amber-500/40 bg-amber-500/10 px-3 py-2 text-xs text-amber-900 dark:text-amber-200"
        >
          {item.error}
        </p>
      )}
      {(item.status === "failed" || item.status === "interrupted") && (
        <div
          role="alert"
          className="flex flex-wrap items-center gap-2 rounded-md border border-destructive/40 bg-destructive/10 px-3 py-2 text-sm text-destructive"
        >
          <span>
            {item.error ??
              (item.status === "interrupted"
                ? "This answer was interrupted before it finished."
                : "The answer failed.")}
          </span>
          <Button size="sm" variant="outline" disabled={busy} onClick={() => onRegenerate(item)}>
            <RotateCcw className="h-3.5 w-3.5" /> Retry
          </Button>
        </div>
      )}
      {!streaming && (
        <div className="flex flex-wrap items-center gap-0.5 opacity-70 transition-opacity focus-within:opacity-100 group-hover:opacity-100">
          <BranchSwitcher item={item} onSwitch={onSwitch} busy={busy} />
          {item.content && (
            <IconButton label="Copy answer" onClick={copy}>
              {copied ? <Check className="h-3.5 w-3.5" /> : <Copy className="h-3.5 w-3.5" />}
            </IconButton>
          )}
          {rateable && item.status === "complete" && item.content && (
            <FeedbackControl itemId={item.id} initial={item.feedback ?? null} />
          )}
          {item.status !== "failed" && item.status !== "interrupted" && (
            <IconButton label="Regenerate answer" disabled={busy} onClick={() => onRegenerate(item)}>
              <RefreshCw className="h-3.5 w-3.5" />
            </IconButton>
          )}
          {models.length > 1 && (
            <select
              aria-label="Regenerate with another model"
              data-testid="regenerate-with"
              className="h-7 max-w-[8rem] rounded border-0 bg-transparent px-1 text-xs text-muted-foreground hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
              value=""
              disabled={busy}
              onChange={(e) => e.target.value && onRegenerate(item, e.target.value)}
            >
              <option value="">Regenerate with…</option>
              {models.map((m) => (
                <option key={m.id} value={m.id}>
                  {m.label}
                </option>
              ))}
            </select>
          )}
          {item.model && (
            <span className="px-1 text-xs text-muted-foreground" data-testid="answer-model" title={item.model}>
              {labelOf(item.model)}
            </span>
          )}
          <MemoriesUsed used={item.memoriesUsed} alsoGiven={item.alsoGiven ?? []} />
          <IconButton label="Model and token usage" onClick={() => setShowUsage((v) => !v)}>
            <Info className="h-3.5 w-3.5" />
          </IconButton>
          {showUsage && (
            <span className="ml-1 text-xs text-muted-foreground" data-testid="usage">
              {item.model ?? "unknown model"} · {item.promptTokens ?? "?"} prompt + {item.completionTokens ?? "?"}{" "}
              completion tokens
            </span>
          )}
        </div>
      )}
    </div>
  );
}

type MemoryRef = { id: string; text: string; mine?: boolean };

function MemoryLinks({ memories }: { memories: MemoryRef[] }) {
  return (
    <ul className="mt-1 grid gap-1 pl-2">
      {memories.map((m) => (
        <li key={m.id}>
          <Link className="text-primary hover:underline" href={`/settings/memory#memory-${m.id}`}>
            {m.text}
          </Link>
          {m.mine && (
            <span className="ml-1 text-muted-foreground" data-testid="memory-mine">
              (your own memory: the project&apos;s other members do not see it)
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

/** The memories the answer drew on; those the model was also given but the answer did not use, folded. */
function MemoriesUsed({ used, alsoGiven }: { used: MemoryRef[]; alsoGiven: MemoryRef[] }) {
  if (!used.length && !alsoGiven.length) return null;
  const given = alsoGiven.length > 0 && (
    <details className="mt-1 pl-2" data-testid="memories-also-given">
      <summary className="cursor-pointer rounded px-1 py-0.5 hover:text-foreground">
        {used.length ? "Also given to the model" : "Memories given to the model, none used"} ({alsoGiven.length})
      </summary>
      <MemoryLinks memories={alsoGiven} />
    </details>
  );
  if (!used.length) return <div className="mx-1 text-xs text-muted-foreground">{given}</div>;
  return (
    <details className="mx-1 text-xs text-muted-foreground" data-testid="memories-used">
      <summary className="cursor-pointer rounded px-1 py-0.5 hover:text-foreground">
        Memories used ({used.length})
      </summary>
      <MemoryLinks memories={used} />
      {given}
    </details>
  );
}
