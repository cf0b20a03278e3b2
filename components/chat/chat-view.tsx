"use client";
import { THREADS_CHANGED } from "./events";
import { Fragment, useCallback, useEffect, useRef, useState } from "react";
import { toast } from "sonner";
import { Eraser, Folder, Undo2 } from "lucide-react";
import Link from "next/link";
import { Alert } from "@/components/ui/alert";
import { Button } from "@/components/ui/button";
import {
  clearThreadAction,
  loadThreadAction,
  setThreadModelAction,
  switchBranchAction,
  undoTurnAction,
} from "@/app/(app)/c/actions";
import type { ThreadView } from "@/lib/chat/threads";
import { Composer } from "./composer";
import { Message } from "./message";
import type { UiItem } from "./types";
import { count } from "@/lib/text/plural";
import type { WireTurnEvent } from "@/lib/chat/turn-events";
import { LocalDate } from "@/components/ui/local-date";
import type { ChatSetup } from "@/lib/chat/chat-setup";
import { ModelPicker } from "./model-picker";
import { useAttachmentDrafts, type DraftPlace } from "./attachments";

export type ChatViewProps = ChatSetup & {
  initial: ThreadView | null;
  /** A new chat in this project (`shared`: a shared project, where a chat may be kept to oneself). */
  project?: { id: string; name: string; shared?: boolean } | null;
  /** A new chat's first message made its thread. */
  onStarted?: () => void;
};

function toUi(view: ThreadView): UiItem[] {
  // Each call's result, so the answer shows what the call did (saved, or only proposed), not just its name.
  const results = new Map(
    view.items.flatMap((i) => (i.role === "tool" && i.toolCallId ? [[i.toolCallId, i.content]] : [])),
  );
  return (
    view.items
      // Tool results of Mnemo's own calls stay in the history (and the prompt); the answer that called them shows
      // what was used. Notes an import brought (another app's tool calls, no call id here) are shown, folded.
      .filter((i) => i.role === "user" || i.role === "assistant" || (i.role === "tool" && !i.toolCallId))
      .map((i) => ({
        id: i.id,
        parentId: i.parentId,
        role: i.role,
        content: i.content,
        status: i.status,
        error: i.error,
        model: i.model,
        promptTokens: i.promptTokens,
        completionTokens: i.completionTokens,
        siblingIds: i.siblingIds,
        toolCalls: i.toolCalls?.map((c) => ({ ...c, result: results.get(c.id) })) ?? null,
        toolName: i.toolName,
        memoriesUsed: i.memoriesUsed,
        alsoGiven: i.alsoGiven,
        feedback: i.feedback,
        attachments: i.attachments,
        sources: i.sources,
        createdAt: new Date(i.createdAt).toISOString(),
      }))
  );
}

const SOURCES: Record<string, string> = {
  chatgpt: "ChatGPT",
  claude: "Claude",
  "open-webui": "Open WebUI",
  librechat: "LibreChat",
  mnemo: "another Mnemo",
};
/** Days are told apart in UTC, as stored (the separator shows the date in the reader's own format). */
const day = (iso: string) => iso.slice(0, 10);

/** A message shown before the server has saved it (replaced by the saved one). */
function pendingItem(id: string, role: UiItem["role"], content: string, status: UiItem["status"]): UiItem {
  return {
    id,
    parentId: null,
    role,
    content,
    status,
    error: null,
    model: null,
    promptTokens: null,
    completionTokens: null,
    siblingIds: [],
    toolCalls: null,
    memoriesUsed: [],
  };
}

export function ChatView({
  initial,
  modelMissing,
  maxChars,
  models,
  model: initialModel,
  project: newIn = null,
  onStarted,
}: ChatViewProps) {
  const [threadId, setThreadId] = useState<string | null>(initial?.thread.id ?? null);
  const [title, setTitle] = useState(initial?.thread.title ?? null);
  const [items, setItems] = useState<UiItem[]>(initial ? toUi(initial) : []);
  const [totals, setTotals] = useState(initial?.totals ?? { promptTokens: 0, completionTokens: 0 });
  const [summary, setSummary] = useState(initial?.summary ?? null);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [temporary, setTemporary] = useState(initial?.thread.temporary ?? false);
  // A new chat in a shared project seen by its author alone (it teaches the project nothing).
  const [onlyMe, setOnlyMe] = useState(false);
  const [model, setModel] = useState(initialModel);
  // Where a file attached now will be sent (set below, each render, once the chat and project are known).
  const place = useRef<DraftPlace>({});
  const files = useAttachmentDrafts(place);
  const [dragging, setDragging] = useState(false);
  const imported = initial?.thread.imported ?? null;
  // A shared project's chat is continued by its author alone; the other members read it (lib/projects/access.ts).
  const sharedBy = initial?.thread.shared ?? null;
  const readOnly = !!sharedBy && !sharedBy.mayContinue;
  const project = initial ? initial.thread.project : newIn;
  place.current = threadId ? { threadId } : project && !temporary ? { projectId: project.id } : {};
  const abortRef = useRef<AbortController | null>(null);
  const streamingId = useRef<string | null>(null);
  // Counts the turns started here: a reload that began before the latest one must not replace what it shows.
  const turns = useRef(0);
  const scrollRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  const apply = useCallback((view: ThreadView) => {
    setItems(toUi(view));
    setTotals(view.totals);
    setSummary(view.summary);
    setTitle(view.thread.title);
  }, []);

  const reload = useCallback(
    async (id = threadId) => {
      if (!id) return;
      const turn = turns.current;
      const r = await loadThreadAction(id);
      // A turn sent meanwhile (a quick next message) owns the list now; this older view would drop it mid-stream.
      if (r.ok && turns.current === turn && !streamingId.current) apply(r.data);
    },
    [threadId, apply],
  );

  // Keep the newest text in view while streaming, unless the user scrolled up.
  useEffect(() => {
    const el = scrollRef.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [items]);

  // Opened at a message (a search result: /c/<id>#item-<itemId>): show it, marked, instead of the end.
  useEffect(() => {
    const target = window.location.hash.startsWith("#item-")
      ? document.getElementById(window.location.hash.slice(1))
      : null;
    if (!target) return;
    stick.current = false;
    target.scrollIntoView({ block: "center" });
    target.setAttribute("data-found", "true");
    const t = setTimeout(() => target.removeAttribute("data-found"), 4000);
    return () => clearTimeout(t);
  }, [threadId]);

  // An answer that is still being written elsewhere (e.g. after a reload): poll until it ends.
  const someoneStreaming = !busy && items.some((i) => i.status === "streaming");
  useEffect(() => {
    if (!someoneStreaming) return;
    const t = setInterval(() => void reload(), 1000);
    return () => clearInterval(t);
  }, [someoneStreaming, reload]);

  async function stream(
    body: Record<string, unknown>,
    optimistic: { user?: UiItem; replaceId?: string; parentId?: string | null },
  ) {
    setBusy(true);
    stick.current = true;
    turns.current++;
    const tempAssistant = pendingItem("pending-assistant", "assistant", "", "streaming");
    const before = items;
    setItems((prev) => {
      let base = prev;
      if (optimistic.replaceId) {
        const idx = prev.findIndex((i) => i.id === optimistic.replaceId);
        base = idx >= 0 ? prev.slice(0, idx) : prev;
      }
      return [...base, ...(optimistic.user ? [optimistic.user] : []), tempAssistant];
    });
    const abort = new AbortController();
    abortRef.current = abort;
    let currentThread = threadId;
    let assistantId = tempAssistant.id;
    let toolItemId = "";
    let started = false;
    try {
      const res = await fetch("/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        // The browser's time zone: the model is told the user's date (lib/chat/today.ts).
        body: JSON.stringify({ ...body, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone }),
        signal: abort.signal,
      });
      if (!res.ok || !res.body) {
        const msg = (await res.json().catch(() => null))?.error ?? `The request failed (${res.status}).`;
        setItems(before);
        toast.error(msg);
        return false;
      }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line) as WireTurnEvent;
          if (ev.type === "start") {
            started = true;
            if (ev.modelNote) toast.info(ev.modelNote);
            assistantId = ev.assistantItemId;
            streamingId.current = ev.assistantItemId;
            if (!currentThread) {
              currentThread = ev.threadId;
              setThreadId(ev.threadId);
              window.history.replaceState(null, "", `/c/${ev.threadId}`);
              window.dispatchEvent(new Event(THREADS_CHANGED));
              onStarted?.();
            }
            setItems((prev) =>
              prev.map((i) =>
                i.id === "pending-assistant"
                  ? { ...i, id: ev.assistantItemId, model: ev.model }
                  : i.id === "pending-user"
                    ? { ...i, id: ev.userItemId }
                    : i,
              ),
            );
          } else if (ev.type === "delta") {
            setItems((prev) => prev.map((i) => (i.id === assistantId ? { ...i, content: i.content + ev.text } : i)));
          } else if (ev.type === "tool") {
            // The model used a memory tool: this item keeps the call, the answer continues in a new item.
            if (assistantId !== ev.assistantItemId) {
              toolItemId = assistantId;
              assistantId = ev.assistantItemId;
              streamingId.current = ev.assistantItemId;
              setItems((prev) => {
                const idx = prev.findIndex((i) => i.id === toolItemId);
                const next = {
                  ...(idx >= 0 ? prev[idx] : pendingItem(ev.assistantItemId, "assistant", "", "streaming")),
                  id: ev.assistantItemId,
                  content: "",
                  toolCalls: null,
                  status: "streaming" as const,
                };
                return idx >= 0 ? [...prev.slice(0, idx + 1), next, ...prev.slice(idx + 1)] : [...prev, next];
              });
            }
            const call = { id: `${toolItemId}-${ev.name}`, name: ev.name, arguments: "", result: ev.result };
            setItems((prev) =>
              prev.map((i) =>
                i.id === toolItemId ? { ...i, status: "complete", toolCalls: [...(i.toolCalls ?? []), call] } : i,
              ),
            );
          } else if (ev.type === "done" || ev.type === "error") {
            const used = ev.type === "done" ? ev.memoriesUsed : [];
            const alsoGiven = ev.type === "done" ? ev.alsoGiven : [];
            if (ev.item)
              setItems((prev) =>
                prev.map((i) =>
                  i.id === assistantId
                    ? {
                        ...i,
                        ...ev.item,
                        siblingIds: i.siblingIds,
                        toolCalls: i.toolCalls,
                        memoriesUsed: used,
                        alsoGiven,
                      }
                    : i,
                ),
              );
          }
        }
      }
      return true;
    } catch (e) {
      if ((e as Error).name !== "AbortError") {
        toast.error("The connection to the server was lost.");
        if (!started) setItems(before);
        return started;
      }
      return started;
    } finally {
      abortRef.current = null;
      streamingId.current = null;
      setBusy(false);
      if (currentThread) {
        // The server finishes saving a stopped answer just after the stream ends.
        setTimeout(() => void reload(currentThread), abort.signal.aborted ? 400 : 0);
        window.dispatchEvent(new Event(THREADS_CHANGED));
      }
    }
  }

  async function stop() {
    const id = streamingId.current;
    if (id)
      await fetch("/api/chat/stop", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ itemId: id }),
      }).catch(() => {});
    abortRef.current?.abort();
  }

  async function send() {
    const content = draft;
    const attached = files.drafts;
    const sent = files.ready;
    setDraft("");
    files.clear();
    const user = { ...pendingItem("pending-user", "user", content, "complete"), attachments: sent };
    const ok = await stream(
      {
        kind: "send",
        threadId: threadId ?? undefined,
        content,
        attachments: sent.length ? sent.map((f) => f.id) : undefined,
        temporary: threadId ? undefined : temporary,
        projectId: threadId || temporary ? undefined : project?.id,
        private: !threadId && !temporary && newIn?.shared && onlyMe ? true : undefined,
        // A new chat's pick goes with its first message (an existing thread keeps its own).
        model: threadId ? undefined : (model ?? undefined),
      },
      { user },
    );
    if (!ok) {
      setDraft(content); // never lose what the user typed, nor what they attached
      files.restore(attached);
    }
  }

  const onEdit = (item: UiItem, content: string) =>
    void stream(
      { kind: "edit", threadId, itemId: item.id, content },
      { user: { ...item, id: "pending-user", content, siblingIds: [] }, replaceId: item.id },
    );
  const onRegenerate = (item: UiItem, withModel?: string) =>
    void stream({ kind: "regenerate", threadId, itemId: item.id, model: withModel }, { replaceId: item.id });
  const onPickModel = async (id: string) => {
    const before = model;
    setModel(id);
    if (!threadId) return; // kept until the first message makes the thread
    const r = await setThreadModelAction(threadId, id);
    if (!r.ok) {
      setModel(before);
      toast.error(r.error);
    }
  };
  const labelOf = (id: string | null) => models.find((m) => m.id === id)?.label ?? id;
  const onSwitch = async (itemId: string) => {
    if (!threadId) return;
    const r = await switchBranchAction(threadId, itemId);
    if (r.ok) apply(r.data);
    else toast.error(r.error);
  };
  const onUndo = async () => {
    if (!threadId) return;
    const r = await undoTurnAction(threadId);
    if (!r.ok) return void toast.error(r.error);
    apply(r.data.view);
    const n = r.data.withdrawn;
    if (n) toast.success(`Mnemo took back what it learned from that turn (${n === 1 ? "1 memory" : `${n} memories`}).`);
  };
  const onClear = async () => {
    if (!threadId || !window.confirm("Clear this thread? All its messages will be deleted.")) return;
    const r = await clearThreadAction(threadId);
    if (r.ok) apply(r.data);
    else toast.error(r.error);
  };

  const totalTokens = totals.promptTokens + totals.completionTokens;
  // Files dropped anywhere on the chat are attached to the message being written.
  const dropping = !modelMissing;
  return (
    <div
      className="relative flex h-full flex-col"
      onDragOver={(e) => {
        if (!dropping || !e.dataTransfer.types.includes("Files")) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => {
        if (e.currentTarget === e.target || !e.currentTarget.contains(e.relatedTarget as Node)) setDragging(false);
      }}
      onDrop={(e) => {
        if (!dropping || !e.dataTransfer.files.length) return;
        e.preventDefault();
        setDragging(false);
        files.add(e.dataTransfer.files);
      }}
    >
      {dragging && (
        <div
          className="pointer-events-none absolute inset-2 z-20 flex items-center justify-center rounded-xl border-2 border-dashed border-primary bg-background/80 text-sm font-medium"
          data-testid="drop-overlay"
        >
          Drop files to attach them
        </div>
      )}
      <div className="flex min-h-12 items-center gap-2 border-b border-border px-4 py-2">
        {project && !temporary && (
          <Link
            href={`/p/${project.id}`}
            className="flex max-w-[40%] shrink-0 items-center gap-1 truncate rounded bg-muted px-1.5 py-0.5 text-xs text-muted-foreground hover:text-foreground"
            data-testid="thread-project"
          >
            <Folder className="h-3.5 w-3.5 shrink-0" aria-hidden />
            <span className="truncate">{project.name}</span>
          </Link>
        )}
        {sharedBy && (
          <span
            className="shrink-0 rounded bg-muted px-1.5 py-0.5 text-xs text-muted-foreground"
            data-testid="thread-author"
            title={
              sharedBy.private
                ? "Only you see this chat; it teaches the project nothing"
                : sharedBy.mayContinue
                  ? "Your chat: the project's members can read it"
                  : undefined
            }
          >
            {sharedBy.private ? "only you" : sharedBy.mayContinue ? "yours · shared" : `by ${sharedBy.author}`}
          </span>
        )}
        <h1 className="min-w-0 flex-1 truncate text-sm font-medium" data-testid="thread-title">
          {title ?? (temporary ? "Temporary chat" : "New chat")}
          {temporary && (
            <span className="ml-2 rounded bg-muted px-1.5 py-0.5 text-xs text-muted-foreground">
              temporary · not saved
            </span>
          )}
          {initial?.thread.via && (
            <span
              className="ml-2 rounded bg-muted px-1.5 py-0.5 text-xs font-normal text-muted-foreground"
              data-testid="thread-via"
            >
              via {initial.thread.via}
            </span>
          )}
          {imported && (
            <span
              className="ml-2 rounded bg-muted px-1.5 py-0.5 text-xs font-normal text-muted-foreground"
              data-testid="thread-origin"
            >
              imported from {SOURCES[imported.source] ?? imported.source} · started{" "}
              <LocalDate value={imported.startedAt} />
            </span>
          )}
        </h1>
        <ModelPicker
          models={models}
          value={model}
          onChange={(id) => void onPickModel(id)}
          disabled={busy || readOnly}
        />
        {threadId && !readOnly && (
          <>
            <span className="hidden text-xs text-muted-foreground sm:inline" data-testid="thread-totals">
              {count(totalTokens, "token")} used
            </span>
            <Button
              variant="ghost"
              size="sm"
              onClick={onUndo}
              disabled={busy || items.length === 0}
              aria-label="Undo last turn"
            >
              <Undo2 className="h-4 w-4" /> <span className="hidden sm:inline">Undo</span>
            </Button>
            <Button
              variant="ghost"
              size="sm"
              onClick={onClear}
              disabled={busy || items.length === 0}
              aria-label="Clear thread"
            >
              <Eraser className="h-4 w-4" /> <span className="hidden sm:inline">Clear</span>
            </Button>
          </>
        )}
      </div>
      <div
        ref={scrollRef}
        className="min-h-0 flex-1 overflow-y-auto"
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        <div className="mx-auto flex max-w-3xl flex-col gap-6 px-4 py-6" aria-live="polite" aria-busy={busy}>
          {modelMissing && (
            <Alert variant="info" data-testid="model-missing">
              <p className="font-medium">Chat is not available yet</p>
              <p className="mt-1">{modelMissing}</p>
            </Alert>
          )}
          {items.length === 0 && !modelMissing && (
            <div className="py-16 text-center">
              <h2 className="text-xl font-semibold">What can I help with?</h2>
              <p className="mt-2 text-sm text-muted-foreground">
                Your conversation is saved in this thread and sent back to the model each turn.
              </p>
              {!threadId && project && (
                <p className="mt-2 text-sm text-muted-foreground" data-testid="new-in-project">
                  In the project <span className="font-medium text-foreground">{project.name}</span>: its instructions
                  and memories go with every answer.
                </p>
              )}
              {!threadId && newIn?.shared && !temporary && (
                <label className="mt-6 flex items-center justify-center gap-2 text-sm">
                  <input
                    type="checkbox"
                    className="h-4 w-4"
                    checked={onlyMe}
                    onChange={(e) => setOnlyMe(e.target.checked)}
                    data-testid="private-chat"
                  />
                  Only me (other members do not see it; it teaches the project nothing)
                </label>
              )}
              {!threadId && (
                <label className="mt-6 inline-flex items-center gap-2 text-sm">
                  <input
                    type="checkbox"
                    className="h-4 w-4"
                    checked={temporary}
                    onChange={(e) => setTemporary(e.target.checked)}
                  />
                  Temporary chat (not listed, not kept, no memory)
                </label>
              )}
            </div>
          )}
          {items.map((item, i) => (
            <Fragment key={item.id}>
              {/* Imported history spans months: each new day gets its date. */}
              {imported &&
                item.createdAt &&
                (i === 0 || day(item.createdAt) !== day(items[i - 1].createdAt ?? item.createdAt)) && (
                  <p role="separator" className="text-center text-xs text-muted-foreground" data-testid="day-separator">
                    <LocalDate value={item.createdAt} />
                  </p>
                )}
              <Message
                item={item}
                busy={busy || readOnly}
                onEdit={onEdit}
                onRegenerate={onRegenerate}
                onSwitch={onSwitch}
                models={models}
                labelOf={labelOf}
                rateable={!temporary && (!sharedBy || sharedBy.mayContinue)}
              />
              {summary?.throughItemId === item.id && (
                <details
                  className="rounded-md border border-dashed border-border px-3 py-2 text-xs"
                  data-testid="thread-summary"
                >
                  <summary className="cursor-pointer text-muted-foreground">
                    Summary of the conversation up to here (the model reads it in place of these messages)
                  </summary>
                  <p className="mt-2 whitespace-pre-wrap">{summary.content}</p>
                </details>
              )}
            </Fragment>
          ))}
        </div>
      </div>
      <div className="mx-auto w-full max-w-3xl px-4 pb-4">
        {readOnly ? (
          <p
            className="rounded-md border border-border bg-muted/40 px-3 py-2 text-center text-sm text-muted-foreground"
            data-testid="read-only-note"
          >
            {sharedBy!.author} started this chat: only they can continue it. Start your own in the project.
          </p>
        ) : (
          <Composer
            value={draft}
            onChange={setDraft}
            onSend={() => void send()}
            onStop={() => void stop()}
            busy={busy}
            disabled={!!modelMissing}
            maxChars={maxChars}
            files={files}
          />
        )}
        {/* Keyboard hints only where there is a keyboard and a fine pointer: a phone has neither Shift nor Esc. */}
        <p
          className={`mt-1 hidden text-center text-xs text-muted-foreground ${readOnly ? "" : "pointer-fine:block"}`}
          data-testid="keyboard-hint"
        >
          Enter to send · Shift+Enter for a new line · Esc to stop
        </p>
      </div>
    </div>
  );
}
