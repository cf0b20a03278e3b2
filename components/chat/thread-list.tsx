"use client";
import Link from "next/link";
import { usePathname, useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import { toast } from "sonner";
import { DropdownMenu } from "radix-ui";
import {
  Archive,
  ArchiveRestore,
  Folder,
  FolderInput,
  MoreHorizontal,
  Paperclip,
  Pencil,
  Search,
  Trash2,
} from "lucide-react";
import {
  archiveThreadAction,
  deleteThreadAction,
  listThreadsAction,
  renameThreadAction,
  searchMessagesAction,
  switchBranchAction,
} from "@/app/(app)/c/actions";
import type { ThreadSummary } from "@/lib/chat/threads";
import type { MessageHit } from "@/lib/chat/search";
import { cn } from "@/lib/cn";
import { THREADS_CHANGED } from "./events";
import { moveThreadAction } from "@/app/(app)/p/actions";
import { useProjectList } from "@/components/projects/project-list";
import { PROJECTS_CHANGED } from "@/components/projects/events";
import { LocalDate } from "@/components/ui/local-date";

const menuItem =
  "flex cursor-pointer select-none items-center gap-2 rounded-sm px-2 py-1.5 text-sm outline-none data-[highlighted]:bg-accent data-[highlighted]:text-accent-foreground";

/**
 * The sidebar's threads: newest first, loaded a page at a time as you scroll; chats in a project are listed on the
 * project's page, not here (a search covers them too). The search box finds threads by title and, below them,
 * messages by what they say.
 */
export function ThreadList() {
  const [threads, setThreads] = useState<ThreadSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [q, setQ] = useState("");
  const [archived, setArchived] = useState(false);
  const [loading, setLoading] = useState(true);
  const [renaming, setRenaming] = useState<string | null>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const pathname = usePathname();
  const router = useRouter();

  const load = useCallback(
    async (reset: boolean, from: string | null = null) => {
      setLoading(true);
      const r = await listThreadsAction({
        q: q || undefined,
        archived,
        project: q ? undefined : "none",
        cursor: reset ? undefined : (from ?? undefined),
      });
      setLoading(false);
      if (!r.ok) return toast.error(r.error);
      setThreads((prev) => (reset ? r.data.threads : [...prev, ...r.data.threads]));
      setCursor(r.data.nextCursor);
    },
    [q, archived],
  );

  useEffect(() => {
    const t = setTimeout(() => void load(true), q ? 250 : 0);
    return () => clearTimeout(t);
  }, [load, q]);

  // Messages by content, beside the title matches.
  const [hits, setHits] = useState<MessageHit[]>([]);
  const [hitsCursor, setHitsCursor] = useState<string | null>(null);
  // Misspelled words the search also looked for in their likely spelling (lib/memory/spelling.ts).
  const [respelled, setRespelled] = useState<Array<{ word: string; also: string[] }>>([]);
  const [importedOnly, setImportedOnly] = useState(false);
  const [inProject, setInProject] = useState("");
  const searchMessages = useCallback(
    async (from: string | null) => {
      if (!q.trim()) return;
      const r = await searchMessagesAction({
        q,
        imported: importedOnly ? true : undefined,
        project: inProject || undefined,
        cursor: from ?? undefined,
      });
      if (!r.ok) return toast.error(r.error);
      setHits((prev) => (from ? [...prev, ...r.data.hits] : r.data.hits));
      setHitsCursor(r.data.nextCursor);
      setRespelled(r.data.respelled);
    },
    [q, importedOnly, inProject],
  );
  useEffect(() => {
    if (!q.trim()) return; // the list is hidden while the box is empty
    const t = setTimeout(() => void searchMessages(null), 250);
    return () => clearTimeout(t);
  }, [q, searchMessages]);

  /** Opens the thread on the branch that holds the message, scrolled to it. */
  async function openHit(h: MessageHit) {
    const r = await switchBranchAction(h.threadId, h.itemId);
    if (!r.ok) return toast.error(r.error);
    router.push(`/c/${h.threadId}#item-${h.itemId}`);
  }

  useEffect(() => {
    const onChange = () => void load(true);
    window.addEventListener(THREADS_CHANGED, onChange);
    return () => window.removeEventListener(THREADS_CHANGED, onChange);
  }, [load]);

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !cursor) return;
    const io = new IntersectionObserver((entries) => {
      if (entries[0].isIntersecting && !loading) void load(false, cursor);
    });
    io.observe(el);
    return () => io.disconnect();
  }, [cursor, loading, load]);

  async function rename(id: string, title: string) {
    setRenaming(null);
    const r = await renameThreadAction(id, title);
    if (!r.ok) return toast.error(r.error);
    setThreads((prev) => prev.map((t) => (t.id === id ? { ...t, title: title.trim() } : t)));
  }
  async function archive(id: string, value: boolean) {
    const r = await archiveThreadAction(id, value);
    if (!r.ok) return toast.error(r.error);
    setThreads((prev) => prev.filter((t) => t.id !== id));
    toast.success(value ? "Thread archived." : "Thread restored.");
  }
  // The search reads every project's chats; a chat moves into the user's own projects or a shared one they may
  // write in (re-sealed under its key, for its members: asked first).
  const projects = useProjectList();
  const movable = projects.filter((p) => !p.shared || p.role !== "viewer");
  const projectName = (id: string | null) => projects.find((p) => p.id === id)?.name;
  async function move(t: ThreadSummary, projectId: string | null) {
    const to = projects.find((p) => p.id === projectId);
    const sharing = `Move "${t.title ?? "Untitled"}" into the shared project "${to?.name}"? Its members will read it; you stay its author, and what it taught you stays in your own memory. It cannot be moved back.`;
    if (to?.shared && !window.confirm(sharing)) return;
    const r = await moveThreadAction(t.id, projectId);
    if (!r.ok) return toast.error(r.error);
    window.dispatchEvent(new Event(PROJECTS_CHANGED));
    void load(true);
    if (pathname === `/c/${t.id}`) router.refresh();
    toast.success(projectId ? `Moved to ${projectName(projectId) ?? "the project"}.` : "Moved out of the project.");
  }
  async function remove(t: ThreadSummary) {
    if (!window.confirm(`Delete "${t.title ?? "Untitled"}"? This cannot be undone.`)) return;
    const r = await deleteThreadAction(t.id);
    if (!r.ok) return toast.error(r.error);
    setThreads((prev) => prev.filter((x) => x.id !== t.id));
    if (pathname === `/c/${t.id}`) router.push("/");
  }

  return (
    <div className="grid grid-cols-[minmax(0,1fr)] gap-2">
      <div className="relative">
        <Search className="pointer-events-none absolute left-2 top-2.5 h-4 w-4 text-muted-foreground" aria-hidden />
        <label htmlFor="thread-search" className="sr-only">
          Search chats
        </label>
        <input
          id="thread-search"
          type="search"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          placeholder="Search chats"
          className="h-9 w-full rounded-md border border-input bg-background pl-8 pr-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        />
      </div>
      <div className="flex gap-1 text-xs" role="tablist" aria-label="Thread list">
        {[false, true].map((a) => (
          <button
            key={String(a)}
            role="tab"
            aria-selected={archived === a}
            onClick={() => setArchived(a)}
            className={cn(
              "rounded px-2 py-1",
              archived === a ? "bg-accent font-medium" : "text-muted-foreground hover:bg-accent",
            )}
          >
            {a ? "Archived" : "Recent"}
          </button>
        ))}
      </div>
      <ul className="grid grid-cols-[minmax(0,1fr)] gap-0.5" aria-label="Threads" data-testid="thread-list">
        {threads.map((t) => {
          const active = pathname === `/c/${t.id}`;
          return (
            <li
              key={t.id}
              className={cn("group flex items-center rounded-md", active ? "bg-accent" : "hover:bg-accent/60")}
            >
              {renaming === t.id ? (
                <form
                  className="flex-1 p-1"
                  onSubmit={(e) => {
                    e.preventDefault();
                    void rename(t.id, String(new FormData(e.currentTarget).get("title") ?? ""));
                  }}
                >
                  <label htmlFor={`rename-${t.id}`} className="sr-only">
                    New title
                  </label>
                  <input
                    id={`rename-${t.id}`}
                    name="title"
                    defaultValue={t.title ?? ""}
                    autoFocus
                    maxLength={120}
                    onBlur={(e) => void rename(t.id, e.currentTarget.value)}
                    onKeyDown={(e) => e.key === "Escape" && setRenaming(null)}
                    className="h-7 w-full rounded border border-input bg-background px-2 text-sm"
                  />
                </form>
              ) : (
                <Link
                  href={`/c/${t.id}`}
                  aria-current={active ? "page" : undefined}
                  className="flex min-w-0 flex-1 items-baseline gap-1 rounded-md px-2 py-1.5 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                >
                  {/* The title gives way to where the chat came from, which stays readable. */}
                  <span className="truncate">{t.title ?? "Untitled"}</span>
                  {t.via && (
                    <span className="max-w-24 shrink-0 truncate text-xs text-muted-foreground">· via {t.via}</span>
                  )}
                  {t.projectId && projectName(t.projectId) && (
                    <span className="max-w-24 shrink-0 truncate text-xs text-muted-foreground">
                      · {projectName(t.projectId)}
                    </span>
                  )}
                </Link>
              )}
              <DropdownMenu.Root>
                <DropdownMenu.Trigger
                  aria-label={`Actions for ${t.title ?? "Untitled"}`}
                  className="mr-1 rounded p-1 text-muted-foreground opacity-0 hover:bg-background focus-visible:opacity-100 focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring group-hover:opacity-100 data-[state=open]:opacity-100"
                >
                  <MoreHorizontal className="h-4 w-4" />
                </DropdownMenu.Trigger>
                <DropdownMenu.Portal>
                  <DropdownMenu.Content
                    align="end"
                    className="z-50 min-w-40 rounded-md border border-border bg-card p-1 shadow-md"
                  >
                    <DropdownMenu.Item className={menuItem} onSelect={() => setRenaming(t.id)}>
                      <Pencil className="h-4 w-4" /> Rename
                    </DropdownMenu.Item>
                    <DropdownMenu.Item className={menuItem} onSelect={() => void archive(t.id, !t.archived)}>
                      {t.archived ? <ArchiveRestore className="h-4 w-4" /> : <Archive className="h-4 w-4" />}{" "}
                      {t.archived ? "Unarchive" : "Archive"}
                    </DropdownMenu.Item>
                    <DropdownMenu.Sub>
                      <DropdownMenu.SubTrigger className={menuItem}>
                        <FolderInput className="h-4 w-4" /> Move to project
                      </DropdownMenu.SubTrigger>
                      <DropdownMenu.Portal>
                        <DropdownMenu.SubContent className="z-50 min-w-40 max-w-64 rounded-md border border-border bg-card p-1 shadow-md">
                          {movable.map((p) => (
                            <DropdownMenu.Item
                              key={p.id}
                              className={menuItem}
                              disabled={t.projectId === p.id}
                              onSelect={() => void move(t, p.id)}
                            >
                              <Folder className="h-4 w-4 shrink-0" /> <span className="truncate">{p.name}</span>
                            </DropdownMenu.Item>
                          ))}
                          {t.projectId && (
                            <DropdownMenu.Item className={menuItem} onSelect={() => void move(t, null)}>
                              No project
                            </DropdownMenu.Item>
                          )}
                          {!projects.length && (
                            <DropdownMenu.Item className={menuItem} onSelect={() => router.push("/p/new")}>
                              New project…
                            </DropdownMenu.Item>
                          )}
                        </DropdownMenu.SubContent>
                      </DropdownMenu.Portal>
                    </DropdownMenu.Sub>
                    <DropdownMenu.Item className={cn(menuItem, "text-destructive")} onSelect={() => void remove(t)}>
                      <Trash2 className="h-4 w-4" /> Delete
                    </DropdownMenu.Item>
                  </DropdownMenu.Content>
                </DropdownMenu.Portal>
              </DropdownMenu.Root>
            </li>
          );
        })}
      </ul>
      {!loading && threads.length === 0 && (
        <p className="px-2 py-2 text-xs text-muted-foreground">
          {q ? "No thread titles match." : archived ? "No archived threads." : "Your conversations will appear here."}
        </p>
      )}
      {q.trim() && (
        <section aria-label="Messages" className="grid gap-1" data-testid="message-hits">
          <div className="grid gap-1 px-2 text-xs text-muted-foreground">
            <span>Messages</span>
            <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
              {projects.length > 0 && (
                <select
                  aria-label="In project"
                  value={inProject}
                  onChange={(e) => setInProject(e.target.value)}
                  className="h-6 max-w-28 rounded border border-input bg-background text-xs"
                >
                  <option value="">All chats</option>
                  <option value="none">No project</option>
                  {projects.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.name}
                    </option>
                  ))}
                </select>
              )}
              <label className="flex items-center gap-1">
                <input
                  type="checkbox"
                  className="h-3.5 w-3.5"
                  checked={importedOnly}
                  onChange={(e) => setImportedOnly(e.target.checked)}
                />
                Imported only
              </label>
            </div>
          </div>
          {respelled.length > 0 && (
            <p className="px-2 text-xs text-muted-foreground" data-testid="respelled">
              Also searched for{" "}
              {respelled.map((r, i) => (
                <span key={r.word}>
                  {i > 0 && "; "}
                  {r.also.map((a) => `“${a}”`).join(" or ")} for “{r.word}”
                </span>
              ))}
            </p>
          )}
          <ul className="grid grid-cols-[minmax(0,1fr)] gap-0.5">
            {hits.map((h) => (
              <li key={h.itemId}>
                <button
                  type="button"
                  onClick={() => void openHit(h)}
                  className="w-full rounded-md px-2 py-1.5 text-left text-xs hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                  data-testid="message-hit"
                >
                  <span className="flex justify-between gap-2 text-muted-foreground">
                    <span className="truncate font-medium text-foreground">{h.threadTitle ?? "Untitled"}</span>
                    <span className="shrink-0">
                      <LocalDate value={h.createdAt} />
                    </span>
                  </span>
                  {h.file && (
                    <span className="flex items-center gap-1 text-muted-foreground" data-testid="hit-file">
                      <Paperclip className="h-3 w-3 shrink-0" aria-hidden />
                      <span className="truncate">
                        In {h.file.name}
                        {h.file.page ? `, p. ${h.file.page}` : ""}
                      </span>
                    </span>
                  )}
                  <span className="line-clamp-3 break-words">
                    {h.role === "user" && !h.file ? "You: " : ""}
                    {h.snippet.map((p, i) =>
                      p.hit ? (
                        <mark
                          key={i}
                          className="rounded-sm bg-amber-300/60 px-0.5 text-foreground dark:bg-amber-500/40"
                        >
                          {p.text}
                        </mark>
                      ) : (
                        <span key={i}>{p.text}</span>
                      ),
                    )}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {hits.length === 0 && <p className="px-2 text-xs text-muted-foreground">No messages match.</p>}
          {hitsCursor && (
            <button
              type="button"
              className="px-2 text-left text-xs text-primary hover:underline"
              onClick={() => void searchMessages(hitsCursor)}
            >
              More messages
            </button>
          )}
        </section>
      )}
      <div ref={sentinel} aria-hidden className="h-4" />
      {loading && <p className="px-2 text-xs text-muted-foreground">Loading…</p>}
    </div>
  );
}
