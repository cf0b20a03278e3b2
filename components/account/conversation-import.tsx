"use client";
// Import conversations from other chat apps: the file goes up as a stream
// (XMLHttpRequest, for upload progress) and the server answers with progress
// lines as it stores each conversation (app/api/import). Then, on request,
// Mnemo learns from them, rate-limited, into the review queue.
import { useCallback, useEffect, useRef, useState, useTransition } from "react";
import { useRouter } from "next/navigation";
import { Upload } from "lucide-react";
import type { ImportReport } from "@/lib/import/run";
import type { LearnPlan } from "@/lib/import/learn";
import { importLearnStatusAction, startImportLearnAction } from "@/app/(app)/settings/data/actions";
import { Button } from "@/components/ui/button";
import { THREADS_CHANGED } from "@/components/chat/events";
import { count as plural } from "@/lib/text/plural";

type Progress = {
  sent: number;
  total: number;
  conversations: number;
  messages: number;
  duplicates: number;
  skipped: number;
};
type Report = Omit<ImportReport, "threadIds">;
type Line =
  | { type: "progress"; conversations: number; messages: number; duplicates: number; skipped: number }
  | { type: "done"; report: Report }
  | { type: "error"; error: string };

const FORMAT: Record<string, string> = {
  chatgpt: "ChatGPT",
  claude: "Claude",
  "open-webui": "Open WebUI",
  librechat: "LibreChat",
  mnemo: "Mnemo",
  mixed: "several apps",
};
const n = (x: number) => x.toLocaleString("en-US");

/** Each reason, with its count only when there are several reasons ("1 skipped: empty conversation (no messages)."). */
const reasons = (rs: Array<{ reason: string; count: number }>) =>
  rs.map((x) => (rs.length > 1 ? `${x.reason} (${n(x.count)})` : x.reason)).join("; ");

function summary(r: Report): string {
  const parts = [
    `Imported ${plural(r.conversations, "conversation")} (${plural(r.messages, "message")}${r.branches ? `, ${plural(r.branches, "edited branch", "edited branches")}` : ""})${r.format ? ` from ${FORMAT[r.format] ?? r.format}` : ""}.`,
  ];
  if (r.duplicates)
    parts.push(
      r.duplicates === 1
        ? "1 conversation was already imported and is left as it was."
        : `${n(r.duplicates)} conversations were already imported and are left as they were.`,
    );
  if (r.skipped.count) parts.push(`${n(r.skipped.count)} skipped: ${reasons(r.skipped.reasons)}.`);
  if (r.droppedMessages?.count)
    parts.push(`${plural(r.droppedMessages.count, "message")} left out: ${reasons(r.droppedMessages.reasons)}.`);
  const named = r.projectsNamedAfterConversations ?? [];
  if (named.length)
    parts.push(
      `ChatGPT's export has no project names: ${named.length === 1 ? "1 project is" : `${n(named.length)} projects are`} ` +
        `named after ${named.length === 1 ? "its" : "their"} first conversation (${named
          .slice(0, 3)
          .map((x) => `“${x}”`)
          .join(
            ", ",
          )}${named.length > 3 ? ", …" : ""}). Rename ${named.length === 1 ? "it" : "them"} on the project page.`,
    );
  if (r.projects?.added || r.projects?.named)
    parts.push(
      `Projects: ${n(r.projects.added)} added${r.projects.named ? `, ${n(r.projects.named)} given their names and instructions` : ""} (see Projects in the sidebar).`,
    );
  if (r.projectDocuments)
    parts.push(
      `${plural(r.projectDocuments, "project knowledge file")} came with them, each as a chat in its project (found by search and recall there).`,
    );
  if (r.memories) parts.push(`Memories: ${n(r.memories.added)} added, ${n(r.memories.skipped)} already there.`);
  if (r.customInstructions?.added)
    parts.push(
      `Your ChatGPT custom instructions became ${plural(r.customInstructions.added, "memory", "memories")} waiting for your review on the Memory page.`,
    );
  if (r.claudeMemory?.added)
    parts.push(
      `What Claude remembered about you became ${plural(r.claudeMemory.added, "memory", "memories")} waiting for your review on the Memory page.`,
    );
  if (r.feedback?.added)
    parts.push(
      `Your ${plural(r.feedback.added, "rating")} of answers there ${r.feedback.added === 1 ? "is" : "are"} on the same answers here.`,
    );
  if (r.files?.added || r.files?.refused.count)
    parts.push(
      `Files attached to messages: ${n(r.files.added)} added` +
        (r.files.refused.count ? `, ${n(r.files.refused.count)} not kept (${r.files.refused.reasons[0].reason})` : "") +
        ".",
    );
  return parts.join(" ");
}

/** Sends the file and reads the progress lines; resolves with the last line. */
function upload(file: File, onProgress: (p: Partial<Progress>) => void): Promise<Line> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    let seen = 0;
    let last: Line | null = null;
    const read = () => {
      const text = xhr.responseText;
      const end = text.lastIndexOf("\n");
      if (end < seen) return;
      for (const raw of text.slice(seen, end).split("\n").filter(Boolean)) {
        try {
          const line = JSON.parse(raw) as Line;
          last = line;
          if (line.type === "progress") onProgress(line);
        } catch {
          // not a progress line (an error page): handled at the end
        }
      }
      seen = end + 1;
    };
    xhr.upload.onprogress = (e) => onProgress({ sent: e.loaded, total: e.total || file.size });
    xhr.onprogress = read;
    xhr.onload = () => {
      read();
      if (xhr.status >= 400) {
        let error = `The import failed (${xhr.status}).`;
        try {
          error = (JSON.parse(xhr.responseText) as { error?: string }).error ?? error;
        } catch {}
        return resolve({ type: "error", error });
      }
      resolve(
        last ?? {
          type: "error",
          error:
            "The import stopped before it finished. What was stored is kept; import the file again to add the rest.",
        },
      );
    };
    xhr.onerror = () =>
      resolve({
        type: "error",
        error:
          "Mnemo could not be reached. Conversations stored before that are kept; import the file again to add the rest.",
      });
    xhr.open("POST", "/api/import");
    xhr.setRequestHeader("content-type", "application/octet-stream");
    xhr.send(file);
  });
}

export function ConversationImport({ initialPlan }: { initialPlan: LearnPlan }) {
  const router = useRouter();
  const file = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [plan, setPlan] = useState(initialPlan);
  const [learnError, setLearnError] = useState<string | null>(null);
  const [starting, startTransition] = useTransition();

  const refreshPlan = useCallback(async () => {
    const r = await importLearnStatusAction();
    if (r.ok) setPlan(r.data);
  }, []);

  // While learning runs, look again every few seconds.
  useEffect(() => {
    if (!plan.running) return;
    const t = setInterval(refreshPlan, 3000);
    return () => clearInterval(t);
  }, [plan.running, refreshPlan]);

  async function onFile(e: React.ChangeEvent<HTMLInputElement>) {
    const f = e.target.files?.[0];
    e.target.value = "";
    if (!f) return;
    setBusy(true);
    setResult(null);
    setProgress({ sent: 0, total: f.size, conversations: 0, messages: 0, duplicates: 0, skipped: 0 });
    const last = await upload(f, (p) => setProgress((old) => ({ ...old!, ...p })));
    setBusy(false);
    setProgress(null);
    if (last.type === "done") {
      setResult({
        ok: !last.report.error,
        text: summary(last.report) + (last.report.error ? ` Then: ${last.report.error}` : ""),
      });
    } else if (last.type === "error") {
      setResult({ ok: false, text: last.error });
    }
    await refreshPlan();
    window.dispatchEvent(new Event(THREADS_CHANGED));
    router.refresh();
  }

  function learn() {
    setLearnError(null);
    startTransition(async () => {
      const r = await startImportLearnAction();
      if (r.ok) setPlan(r.data);
      else setLearnError(r.error);
    });
  }

  const pct = progress && progress.total ? Math.min(100, Math.round((progress.sent / progress.total) * 100)) : 0;
  const minutes = Math.max(1, Math.ceil(plan.remaining / plan.perMinute));
  return (
    <div className="grid gap-4">
      <div className="flex flex-wrap items-center gap-2">
        <Button variant="outline" onClick={() => file.current?.click()} disabled={busy}>
          <Upload className="h-4 w-4" aria-hidden /> {busy ? "Importing…" : "Import conversations"}
        </Button>
        <input
          ref={file}
          type="file"
          accept="application/json,.json,application/zip,.zip"
          className="sr-only"
          aria-label="Conversations file to import"
          onChange={onFile}
          tabIndex={-1}
        />
        <span className="text-xs text-muted-foreground">
          ChatGPT or Claude: the export zip as it came (it also brings Claude&apos;s projects and memory), or
          conversations.json from it. Open WebUI, LibreChat or Mnemo: the exported .json.
        </span>
      </div>

      {progress && (
        <div className="grid gap-1 text-sm" role="status" aria-live="polite" data-testid="import-progress">
          <progress className="h-2 w-full max-w-md" max={100} value={pct} aria-label="Import progress" />
          <span>
            {pct}% of the file read · {plural(progress.conversations, "conversation")} and{" "}
            {plural(progress.messages, "message")} imported
            {progress.duplicates ? ` · ${n(progress.duplicates)} already there` : ""}
            {progress.skipped ? ` · ${n(progress.skipped)} skipped` : ""}
          </span>
        </div>
      )}
      {result && (
        <p
          className={result.ok ? "text-sm" : "text-sm text-destructive"}
          role={result.ok ? "status" : "alert"}
          data-testid="import-result"
        >
          {result.text}
        </p>
      )}

      {plan.threads > 0 && (
        <div className="grid gap-2 rounded-md bg-muted/50 p-3 text-sm" data-testid="import-learn">
          <p className="font-medium">Learn from imported conversations</p>
          {plan.running ? (
            <div className="grid gap-1" role="status" aria-live="polite">
              <progress
                className="h-2 w-full max-w-md"
                max={Math.max(1, plan.done + plan.remaining)}
                value={plan.done}
                aria-label="Learning progress"
              />
              <span>
                Read {n(plan.done)} of {n(plan.done + plan.remaining)} exchanges ({n(plan.perMinute)} a minute). What
                Mnemo learns waits in your{" "}
                <a className="text-primary hover:underline" href="/settings/memory?status=pending">
                  review queue
                </a>
                .
              </span>
            </div>
          ) : plan.remaining > 0 ? (
            <>
              <p className="text-muted-foreground">
                The memory model will read {plural(plan.remaining, "exchange")} from{" "}
                {plural(plan.threads, "imported conversation")}: {plural(plan.remaining, "model call")}, about{" "}
                {plural(minutes, "minute")} at {n(plan.perMinute)} a minute. Nothing is remembered until you approve it
                in the review queue.
              </p>
              <div>
                <Button onClick={learn} disabled={starting || plan.paused}>
                  {starting ? "Starting…" : plan.done ? "Go on learning" : "Learn from them"}
                </Button>
              </div>
              {plan.paused && (
                <p className="text-muted-foreground">Learning is paused: turn it back on under Memory to use this.</p>
              )}
            </>
          ) : (
            <p className="text-muted-foreground" role="status">
              Done: Mnemo read all {plural(plan.done, "exchange")}. Review what it proposes in your{" "}
              <a className="text-primary hover:underline" href="/settings/memory?status=pending">
                review queue
              </a>
              .
            </p>
          )}
          {learnError && (
            <p className="text-destructive" role="alert">
              {learnError}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
