"use client";
// 👍 / 👎 on an answer, with an optional "what was wrong?" after 👎. Both are
// toggle buttons (aria-pressed): pressing the active one again removes the
// rating. A 👎's comment can be added or changed later ("Say what was wrong").
// Mnemo learns from it in the background (lib/memory/feedback.ts).
import { useId, useState, useTransition } from "react";
import { ThumbsDown, ThumbsUp } from "lucide-react";
import { toast } from "sonner";
import { rateAnswerAction } from "@/app/(app)/c/actions";
import { Button } from "@/components/ui/button";
import { cn } from "@/lib/cn";
import type { UiItem } from "./types";

type Feedback = NonNullable<UiItem["feedback"]>;

export function FeedbackControl({ itemId, initial }: { itemId: string; initial: Feedback | null }) {
  const [fb, setFb] = useState<Feedback>(initial ?? { rating: null, comment: null });
  const [asking, setAsking] = useState(false);
  const [comment, setComment] = useState(initial?.comment ?? "");
  const [pending, start] = useTransition();
  const fieldId = useId();

  const send = (rating: 1 | -1 | null, text?: string) =>
    start(async () => {
      const r = await rateAnswerAction({ itemId, rating, comment: text || undefined });
      if (!r.ok) {
        toast.error(r.error);
        return;
      }
      setFb(r.data);
      if (text !== undefined) {
        setAsking(false);
        toast.success("Thanks. Mnemo will learn from this.");
      }
    });

  const toggle = (rating: 1 | -1) => {
    if (fb.rating === rating) {
      setAsking(false);
      send(null);
      return;
    }
    send(rating);
    setAsking(rating === -1);
  };

  const button = (rating: 1 | -1, label: string, Icon: typeof ThumbsUp) => (
    <button
      type="button"
      aria-label={label}
      title={label}
      aria-pressed={fb.rating === rating}
      disabled={pending}
      onClick={() => toggle(rating)}
      className={cn(
        "rounded p-1.5 text-muted-foreground hover:bg-accent hover:text-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-40",
        fb.rating === rating && "bg-accent text-foreground",
      )}
    >
      <Icon className="h-3.5 w-3.5" aria-hidden />
    </button>
  );

  return (
    <span className="inline-flex flex-wrap items-center gap-0.5" data-testid="feedback">
      {button(1, "Good answer", ThumbsUp)}
      {button(-1, "Bad answer", ThumbsDown)}
      {asking && (
        <form
          className="ml-1 flex flex-wrap items-center gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            send(-1, comment.trim());
          }}
        >
          <label htmlFor={fieldId} className="sr-only">
            What was wrong? (optional)
          </label>
          <input
            id={fieldId}
            autoFocus
            value={comment}
            maxLength={1000}
            onChange={(e) => setComment(e.target.value)}
            onKeyDown={(e) => e.key === "Escape" && setAsking(false)}
            placeholder="What was wrong? (optional)"
            className="h-7 w-36 rounded-md sm:w-56 border border-input bg-background px-2 text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          />
          {/* Never disabled while the 👎 itself is saving: a quick comment and Enter must not be lost. */}
          <Button type="submit" size="sm" variant="outline" className="h-7 px-2 text-xs">
            Send
          </Button>
        </form>
      )}
      {!asking && fb.rating === -1 && fb.comment && (
        <span className="ml-1 text-xs text-muted-foreground" data-testid="feedback-comment">
          “{fb.comment}”
        </span>
      )}
      {!asking && fb.rating === -1 && (
        <button
          type="button"
          onClick={() => {
            setComment(fb.comment ?? "");
            setAsking(true);
          }}
          className="ml-1 rounded px-1 text-xs text-muted-foreground underline-offset-2 hover:text-foreground hover:underline focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        >
          {fb.comment ? "Change comment" : "Say what was wrong"}
        </button>
      )}
    </span>
  );
}
