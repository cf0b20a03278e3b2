"use client";
// Paste another assistant's memory list (ChatGPT's "Manage memories", for
// example): each line becomes a memory waiting in the review queue.
import { useState, useTransition } from "react";
import { pasteMemoriesAction } from "@/app/(app)/settings/data/actions";
import { Button } from "@/components/ui/button";

export function MemoryListPaste() {
  const [text, setText] = useState("");
  const [pending, start] = useTransition();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  function submit(e: React.FormEvent) {
    e.preventDefault();
    start(async () => {
      const r = await pasteMemoriesAction(text);
      if (!r.ok) return setMessage({ ok: false, text: `${r.error} Nothing was added.` });
      const { added, skipped, rejected } = r.data;
      setMessage({
        ok: true,
        text: `${added} added to your review queue; ${skipped} you already have${rejected.length ? `; ${rejected.length} left out (${rejected[0].error.replace(/\.$/, "")})` : ""}.`,
      });
      if (added || skipped) setText("");
    });
  }

  return (
    <form onSubmit={submit} className="grid gap-2">
      <label htmlFor="memory-list" className="text-sm font-medium">
        Paste another assistant&apos;s memory list
      </label>
      <textarea
        id="memory-list"
        className="min-h-24 w-full rounded-md border border-input bg-background p-2 text-sm"
        placeholder={"One memory per line, for example:\n- Lives in Porto\n- Prefers short answers"}
        value={text}
        maxLength={100_000}
        onChange={(e) => setText(e.target.value)}
      />
      <div>
        <Button type="submit" variant="outline" disabled={pending || !text.trim()}>
          {pending ? "Adding…" : "Add to review queue"}
        </Button>
      </div>
      {message && (
        <p
          className={message.ok ? "text-sm text-muted-foreground" : "text-sm text-destructive"}
          role={message.ok ? "status" : "alert"}
        >
          {message.text}{" "}
          {message.ok && (
            <a className="text-primary hover:underline" href="/settings/memory?status=pending">
              Review them
            </a>
          )}
        </p>
      )}
    </form>
  );
}
