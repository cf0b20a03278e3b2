"use client";
// Files in the chat: the composer's drafts (uploaded at once, each with its progress and a remove button), the files
// a sent message carries (a picture's thumbnail opens it full size; a document opens its text), and the documents
// an answer drew on.
import { useCallback, useEffect, useRef, useState } from "react";
import { FileText, ImageIcon, Loader2, X } from "lucide-react";
import type { AttachmentMeta, SourceView } from "@/lib/attachments/store";
import { cn } from "@/lib/cn";
import { count } from "@/lib/text/plural";

export type Draft = {
  key: string;
  name: string;
  size: number;
  /** 0–1 while uploading. */
  progress: number;
  meta?: AttachmentMeta;
  error?: string;
};

/** Several at once are fine; more than this per message the server refuses. */
const MAX_DRAFTS = 10;

export const formatSize = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${Math.round(bytes / 1024)} KB`
      : `${(bytes / 1024 / 1024).toLocaleString("en-US", { maximumFractionDigits: 1 })} MB`;

/** Where the composer's message will go: its chat, or the project its new chat starts in. */
export type DraftPlace = { threadId?: string; projectId?: string };

/**
 * The composer's files: upload, remove, and what a sent message takes. `place` is read at each upload: in a shared
 * project the file is uploaded to the project (sealed with its key), so the other members can open it once sent.
 */
export function useAttachmentDrafts(place: { current: DraftPlace } = { current: {} }) {
  const [drafts, setDrafts] = useState<Draft[]>([]);
  const uploads = useRef(new Map<string, XMLHttpRequest>());
  const patch = (key: string, p: Partial<Draft>) =>
    setDrafts((ds) => ds.map((d) => (d.key === key ? { ...d, ...p } : d)));

  // The count as of the last render plus what was added since (two pastes in one tick both see room correctly).
  const count = useRef(0);
  useEffect(() => {
    count.current = drafts.length;
  }, [drafts]);

  function add(files: FileList | File[]) {
    const list = [...files];
    const room = Math.max(0, MAX_DRAFTS - count.current);
    const taken = list.slice(0, room).map((file) => ({ key: crypto.randomUUID(), file }));
    const refused: Draft[] = list.slice(room).map((f) => ({
      key: crypto.randomUUID(),
      name: f.name,
      size: f.size,
      progress: 0,
      error: `At most ${MAX_DRAFTS} files per message.`,
    }));
    count.current += list.length;
    const named = (f: File) => f.name || `pasted.${f.type.split("/")[1] ?? "bin"}`;
    setDrafts((ds) => [
      ...ds,
      ...taken.map((t) => ({ key: t.key, name: named(t.file), size: t.file.size, progress: 0 })),
      ...refused,
    ]);
    for (const t of taken) upload(t.key, t.file, named(t.file));
  }

  function upload(key: string, file: File, name: string) {
    const xhr = new XMLHttpRequest();
    uploads.current.set(key, xhr);
    const where = new URLSearchParams({ name, ...place.current });
    xhr.open("POST", `/api/attachments?${where}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && patch(key, { progress: e.loaded / e.total });
    xhr.onload = () => {
      uploads.current.delete(key);
      const body = (() => {
        try {
          return JSON.parse(xhr.responseText);
        } catch {
          return null;
        }
      })();
      if (xhr.status === 201 && body?.id) patch(key, { progress: 1, meta: body as AttachmentMeta });
      else patch(key, { error: body?.error ?? `The upload failed (${xhr.status}).` });
    };
    xhr.onerror = () => {
      uploads.current.delete(key);
      patch(key, { error: "The upload was cut off: check the connection and attach it again." });
    };
    xhr.send(file);
  }

  const remove = useCallback((key: string) => {
    const xhr = uploads.current.get(key);
    if (xhr) xhr.abort();
    uploads.current.delete(key);
    setDrafts((ds) => {
      const d = ds.find((x) => x.key === key);
      if (d?.meta) void fetch(`/api/attachments/${d.meta.id}`, { method: "DELETE" }).catch(() => undefined);
      return ds.filter((x) => x.key !== key);
    });
  }, []);

  useEffect(() => {
    const pending = uploads.current;
    return () => pending.forEach((x) => x.abort());
  }, []);

  return {
    drafts,
    add,
    remove,
    /** Sent: the chips go (their files now belong to the message). */
    clear: () => setDrafts([]),
    restore: (ds: Draft[]) => setDrafts(ds),
    uploading: drafts.some((d) => !d.meta && !d.error),
    ready: drafts.flatMap((d) => (d.meta ? [d.meta] : [])),
  };
}

export function DraftChips({ drafts, onRemove }: { drafts: Draft[]; onRemove: (key: string) => void }) {
  if (!drafts.length) return null;
  return (
    <ul className="flex flex-wrap gap-2 px-1 pb-2" aria-label="Attached files" data-testid="draft-chips">
      {drafts.map((d) => (
        <li
          key={d.key}
          className={cn(
            "relative flex max-w-[16rem] items-center gap-2 overflow-hidden rounded-lg border border-border bg-muted/50 py-1 pl-2 pr-1 text-xs",
            d.error && "border-destructive/50 bg-destructive/10",
          )}
          data-testid="draft-chip"
        >
          {!d.meta && !d.error ? (
            <Loader2 className="h-3.5 w-3.5 shrink-0 animate-spin" aria-hidden />
          ) : d.meta?.kind === "image" ? (
            <ImageIcon className="h-3.5 w-3.5 shrink-0" aria-hidden />
          ) : (
            <FileText className="h-3.5 w-3.5 shrink-0" aria-hidden />
          )}
          <span className="min-w-0">
            <span className="block truncate font-medium" title={d.name}>
              {d.name}
            </span>
            <span
              className={cn("block", d.error ? "text-destructive" : "text-muted-foreground")}
              role={d.error ? "alert" : undefined}
            >
              {d.error ??
                (d.meta
                  ? `${formatSize(d.size)}${d.meta.pages ? ` · ${count(d.meta.pages, "page")}` : ""}`
                  : `Uploading ${Math.round(d.progress * 100)}%`)}
            </span>
          </span>
          <button
            type="button"
            className="shrink-0 rounded p-1 hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
            aria-label={`Remove ${d.name}`}
            onClick={() => onRemove(d.key)}
          >
            <X className="h-3.5 w-3.5" />
          </button>
          {!d.meta && !d.error && (
            <span
              className="absolute bottom-0 left-0 h-0.5 bg-primary"
              style={{ width: `${Math.round(d.progress * 100)}%` }}
            />
          )}
        </li>
      ))}
    </ul>
  );
}

/** A sent message's files: pictures as thumbnails (full size in a new tab), documents as their text. */
export function SentAttachments({ files }: { files: AttachmentMeta[] }) {
  if (!files.length) return null;
  return (
    <ul
      className="flex max-w-[85%] flex-wrap justify-end gap-2"
      aria-label="Files sent with this message"
      data-testid="sent-attachments"
    >
      {files.map((f) =>
        f.kind === "image" ? (
          <li key={f.id}>
            <a href={`/api/attachments/${f.id}`} target="_blank" rel="noopener" title={`${f.name}: open full size`}>
              {/* eslint-disable-next-line @next/next/no-img-element -- the user's own file, served by Mnemo */}
              <img
                src={`/api/attachments/${f.id}`}
                alt={f.name}
                className="h-24 max-w-[12rem] rounded-lg border border-border object-cover"
              />
            </a>
          </li>
        ) : (
          <li key={f.id}>
            <a
              href={`/api/attachments/${f.id}?as=text`}
              target="_blank"
              rel="noopener"
              className="flex max-w-[16rem] items-center gap-2 rounded-lg border border-border bg-muted/50 px-2 py-1 text-xs hover:bg-accent"
              title={`${f.name}: open its text`}
            >
              <FileText className="h-3.5 w-3.5 shrink-0" aria-hidden />
              <span className="min-w-0">
                <span className="block truncate font-medium">{f.name}</span>
                <span className="block text-muted-foreground">
                  {formatSize(f.bytes)}
                  {f.pages ? ` · ${count(f.pages, "page")}` : ""}
                </span>
              </span>
            </a>
          </li>
        ),
      )}
    </ul>
  );
}

/** "Answered from: report.pdf, p. 4" */
export function AnswerSources({ sources }: { sources: SourceView[] }) {
  if (!sources.length) return null;
  const byFile = new Map<string, { name: string; pages: number[] }>();
  for (const s of sources) {
    const f = byFile.get(s.id) ?? { name: s.name, pages: [] };
    if (s.page) f.pages.push(s.page);
    byFile.set(s.id, f);
  }
  return (
    <p className="text-xs text-muted-foreground" data-testid="answer-sources">
      Answered from:{" "}
      {[...byFile.entries()].map(([id, f], i) => (
        <span key={id}>
          {i > 0 && "; "}
          <a
            className="underline hover:text-foreground"
            href={`/api/attachments/${id}?as=text`}
            target="_blank"
            rel="noopener"
          >
            {f.name}
          </a>
          {f.pages.length ? `, p. ${[...new Set(f.pages)].sort((a, b) => a - b).join(", ")}` : ""}
        </span>
      ))}
    </p>
  );
}
