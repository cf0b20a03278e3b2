"use client";
// Memories on their own: download as JSON or Markdown, import from a JSON export.
import { useRef, useState, useTransition } from "react";
import { Upload } from "lucide-react";
import type { ImportResult } from "@/lib/memory/portable";
import { Button, buttonVariants } from "@/components/ui/button";
import { count } from "@/lib/text/plural";

export function MemoryTransfer() {
  const file = useRef<HTMLInputElement>(null);
  const [pending, start] = useTransition();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  function onFile(e: React.ChangeEvent<HTMLInputElement>) {
    const f = e.target.files?.[0];
    e.target.value = "";
    if (!f) return;
    if (f.size > 5_000_000) return setMessage({ ok: false, text: "That file is too large (at most 5 MB)." });
    start(async () => {
      setMessage({ ok: true, text: `Uploading ${f.name} (${Math.ceil(f.size / 1024).toLocaleString()} KB)…` });
      let res: Response;
      try {
        res = await fetch("/api/memories/import", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: f,
        });
      } catch {
        return setMessage({ ok: false, text: "Mnemo could not be reached. Nothing was imported; try again." });
      }
      const body = (await res.json().catch(() => null)) as (ImportResult & { error?: string }) | null;
      if (!res.ok || !body)
        return setMessage({
          ok: false,
          text: `${body?.error ?? `The import failed (${res.status}).`} Nothing was imported.`,
        });
      const { added, skipped, rejected } = body;
      setMessage({
        ok: true,
        text: `Imported ${count(added, "memory", "memories")}; skipped ${skipped} already remembered${rejected.length ? `; ${rejected.length} not imported (${rejected[0].error.replace(/\.$/, "")}${rejected.length > 1 ? " …" : ""})` : ""}.`,
      });
    });
  }

  return (
    <div className="grid gap-3">
      <div className="flex flex-wrap gap-2">
        <a className={buttonVariants({ variant: "outline" })} href="/api/memories/export?format=json" download>
          Memories as JSON
        </a>
        <a className={buttonVariants({ variant: "outline" })} href="/api/memories/export?format=markdown" download>
          Memories as Markdown
        </a>
        <Button variant="outline" onClick={() => file.current?.click()} disabled={pending}>
          <Upload className="h-4 w-4" aria-hidden /> {pending ? "Importing…" : "Import memories (JSON)"}
        </Button>
        <input
          ref={file}
          type="file"
          accept="application/json,.json"
          className="sr-only"
          aria-label="Memories file to import"
          onChange={onFile}
          tabIndex={-1}
        />
      </div>
      {message && (
        <p
          className={message.ok ? "text-sm text-muted-foreground" : "text-sm text-destructive"}
          role={message.ok ? "status" : "alert"}
        >
          {message.text}
        </p>
      )}
    </div>
  );
}
