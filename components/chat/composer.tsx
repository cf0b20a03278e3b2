"use client";
import { useEffect, useRef, useState } from "react";
import { ArrowUp, Paperclip, Square } from "lucide-react";
import { Button } from "@/components/ui/button";
import { DraftChips, type useAttachmentDrafts } from "./attachments";

type Props = {
  value: string;
  onChange: (v: string) => void;
  onSend: () => void;
  onStop: () => void;
  busy: boolean;
  disabled?: boolean;
  maxChars: number;
  /** The files attached to the message being written (components/chat/attachments.tsx). */
  files?: ReturnType<typeof useAttachmentDrafts>;
};

/** What the file picker offers (the server sniffs the content whatever the name says). */
const ACCEPT =
  "image/png,image/jpeg,image/webp,image/gif,application/pdf,.docx,text/*,.md,.markdown,.csv,.json,.html,.htm,.txt,.js,.ts,.tsx,.jsx,.py,.rb,.go,.rs,.java,.c,.cpp,.h,.cs,.php,.sh,.sql,.yaml,.yml,.toml,.xml,.log";

/** Enter sends, Shift+Enter adds a line, Esc stops a running answer; files by the clip button, paste or drop. */
export function Composer({ value, onChange, onSend, onStop, busy, disabled, maxChars, files }: Props) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const tooLong = value.length > maxChars;
  // A message may be its files alone; it waits while a file is still uploading.
  const empty = value.trim().length === 0 && !files?.ready.length && !files?.uploading;
  const waiting = !!files?.uploading;
  // Enter pressed while a file uploads: the message goes once the uploads finish, unless it is changed meanwhile
  // (its text, or a file added or removed), or a file fails (the user decides then). Each fires once: a failed send
  // restores the message unsent, and it stays so.
  const canSend = !busy && !empty && !tooLong && !disabled;
  const failed = !!files?.drafts.some((d) => d.error);
  const draftKeys = files?.drafts.map((d) => d.key).join() ?? "";
  const [queued, setQueued] = useState<{ text: string; keys: string; n: number } | null>(null);
  const queues = useRef(0);
  const fired = useRef(0);
  const waitingToSend = queued && queued.text === value && queued.keys === draftKeys ? queued : null;
  const send = () => {
    if (!canSend) return;
    if (waiting) setQueued({ text: value, keys: draftKeys, n: ++queues.current });
    else onSend();
  };
  useEffect(() => {
    if (!waitingToSend || waiting || fired.current === waitingToSend.n) return;
    fired.current = waitingToSend.n;
    if (canSend && !failed) onSend();
  }, [waitingToSend, waiting, canSend, failed, onSend]);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight, 240)}px`;
  }, [value]);
  useEffect(() => {
    if (!busy) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") onStop();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [busy, onStop]);

  return (
    <form
      className="rounded-2xl border border-input bg-card p-2 shadow-sm focus-within:ring-2 focus-within:ring-ring"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      {files && <DraftChips drafts={files.drafts} onRemove={files.remove} />}
      <label htmlFor="composer" className="sr-only">
        Message
      </label>
      <textarea
        id="composer"
        ref={ref}
        rows={1}
        value={value}
        disabled={disabled}
        placeholder={disabled ? "Chat is not available" : "Message Mnemo…"}
        aria-invalid={tooLong || undefined}
        aria-describedby={tooLong ? "composer-error" : undefined}
        className="block max-h-60 w-full resize-none bg-transparent px-2 py-1.5 text-sm placeholder:text-muted-foreground focus-visible:outline-none"
        onChange={(e) => onChange(e.target.value)}
        onPaste={(e) => {
          // A pasted picture or file is attached; pasted text stays text.
          if (!files || !e.clipboardData.files.length) return;
          e.preventDefault();
          files.add(e.clipboardData.files);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      <div className="flex items-center justify-between gap-2 px-1 pt-1">
        {files && (
          <>
            <input
              ref={picker}
              type="file"
              multiple
              accept={ACCEPT}
              className="hidden"
              data-testid="attach-input"
              onChange={(e) => {
                if (e.target.files?.length) files.add(e.target.files);
                e.target.value = "";
              }}
            />
            <Button
              type="button"
              size="icon"
              variant="ghost"
              disabled={disabled}
              onClick={() => picker.current?.click()}
              aria-label="Attach files"
              title="Attach files (or paste, or drop them here)"
            >
              <Paperclip className="h-4 w-4" />
            </Button>
          </>
        )}
        {waitingToSend && waiting ? (
          <p className="flex-1 text-xs text-muted-foreground" role="status" data-testid="composer-waiting">
            Sends when the files finish uploading.
          </p>
        ) : (
          <p id="composer-error" className="flex-1 text-xs text-destructive" role={tooLong ? "alert" : undefined}>
            {tooLong
              ? `Messages are limited to ${maxChars.toLocaleString("en-US")} characters (this one has ${value.length.toLocaleString("en-US")}).`
              : ""}
          </p>
        )}
        {busy ? (
          <Button type="button" size="icon" variant="secondary" onClick={onStop} aria-label="Stop generating (Esc)">
            <Square className="h-4 w-4" />
          </Button>
        ) : (
          <Button
            type="submit"
            size="icon"
            disabled={!canSend || !!(waitingToSend && waiting)}
            aria-label={waiting ? "Send when the files finish uploading" : "Send message (Enter)"}
          >
            <ArrowUp className="h-4 w-4" />
          </Button>
        )}
      </div>
    </form>
  );
}
