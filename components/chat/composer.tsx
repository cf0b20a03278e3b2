"use client";
import { useEffect, useRef } from "react";
import { ArrowUp, Square } from "lucide-react";
import { Button } from "@/components/ui/button";

type Props = {
  value: string;
  onChange: (v: string) => void;
  onSend: () => void;
  onStop: () => void;
  busy: boolean;
  disabled?: boolean;
  maxChars: number;
};

/** Enter sends, Shift+Enter adds a line, Esc stops a running answer. */
export function Composer({ value, onChange, onSend, onStop, busy, disabled, maxChars }: Props) {
  const ref = useRef<HTMLTextAreaElement>(null);
  const tooLong = value.length > maxChars;
  const empty = value.trim().length === 0;
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
        if (!busy && !empty && !tooLong && !disabled) onSend();
      }}
    >
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
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            if (!busy && !empty && !tooLong && !disabled) onSend();
          }
        }}
      />
      <div className="flex items-center justify-between gap-2 px-1 pt-1">
        <p id="composer-error" className="text-xs text-destructive" role={tooLong ? "alert" : undefined}>
          {tooLong
            ? `Messages are limited to ${maxChars.toLocaleString("en-US")} characters (this one has ${value.length.toLocaleString("en-US")}).`
            : ""}
        </p>
        {busy ? (
          <Button type="button" size="icon" variant="secondary" onClick={onStop} aria-label="Stop generating (Esc)">
            <Square className="h-4 w-4" />
          </Button>
        ) : (
          <Button type="submit" size="icon" disabled={empty || tooLong || disabled} aria-label="Send message (Enter)">
            <ArrowUp className="h-4 w-4" />
          </Button>
        )}
      </div>
    </form>
  );
}
