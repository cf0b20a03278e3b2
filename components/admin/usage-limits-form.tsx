"use client";
// An admin sets one user's daily limits: empty = the instance default, 0 = none.
import { useState, useTransition } from "react";
import { setUsageLimitsAction } from "@/app/(app)/admin/actions";
import { Button } from "@/components/ui/button";
import { count } from "@/lib/text/plural";

type Props = {
  userId: string;
  current: { messages: number | null; tokens: number | null };
  defaults: { messages: number; tokens: number };
  today: { messages: number; tokens: number };
};

const field =
  "h-9 w-36 rounded-md border border-input bg-background px-2 text-sm tabular-nums focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";
/** "50 messages", or "no message limit" for 0. */
const describe = (n: number, noun: string) => (n > 0 ? count(n, noun) : `no ${noun} limit`);

export function UsageLimitsForm({ userId, current, defaults, today }: Props) {
  const [messages, setMessages] = useState(current.messages === null ? "" : String(current.messages));
  const [tokens, setTokens] = useState(current.tokens === null ? "" : String(current.tokens));
  const [pending, start] = useTransition();
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const parse = (v: string) => (v.trim() === "" ? null : Number(v));

  return (
    <form
      className="grid gap-3 rounded-lg border border-border p-4"
      aria-labelledby="limits-heading"
      onSubmit={(e) => {
        e.preventDefault();
        start(async () => {
          const r = await setUsageLimitsAction({ userId, messages: parse(messages), tokens: parse(tokens) });
          setMessage(r.ok ? { ok: true, text: r.data.message ?? "Saved." } : { ok: false, text: r.error });
        });
      }}
    >
      <div>
        <h3 id="limits-heading" className="font-medium">
          Daily limits
        </h3>
        <p className="text-sm text-muted-foreground" data-testid="usage-today">
          Today (UTC): {count(today.messages, "message")}, {count(today.tokens, "token")}. Empty uses the instance
          default ({describe(defaults.messages, "message")}, {describe(defaults.tokens, "token")}); 0 means no limit.
        </p>
      </div>
      <div className="flex flex-wrap items-end gap-3">
        <label className="grid gap-1 text-sm">
          Messages a day
          <input
            className={field}
            inputMode="numeric"
            pattern="[0-9]*"
            value={messages}
            onChange={(e) => setMessages(e.target.value)}
            placeholder="default"
          />
        </label>
        <label className="grid gap-1 text-sm">
          Tokens a day
          <input
            className={field}
            inputMode="numeric"
            pattern="[0-9]*"
            value={tokens}
            onChange={(e) => setTokens(e.target.value)}
            placeholder="default"
          />
        </label>
        <Button type="submit" variant="outline" disabled={pending}>
          {pending ? "Saving…" : "Save limits"}
        </Button>
      </div>
      {message && (
        <p
          className={message.ok ? "text-sm text-muted-foreground" : "text-sm text-destructive"}
          role={message.ok ? "status" : "alert"}
        >
          {message.text}
        </p>
      )}
    </form>
  );
}
