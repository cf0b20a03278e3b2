"use client";
// "What Mnemo knows about you": the summary the memory model writes from the
// active memories (lib/memory/about.ts), editable by the user. Their own text
// stays until they ask for a new one.
import { useState } from "react";
import type { Result } from "@/lib/http/action";
import { releaseAboutAction, saveAboutAction } from "@/app/(app)/settings/memory/actions";
import { Button } from "@/components/ui/button";
import { LocalDate } from "@/components/ui/local-date";

const ABOUT_MAX_CHARS = 1200;

export function AboutYou({
  about,
  busy,
  act,
}: {
  about: { text: string | null; at: string | null; edited: boolean };
  busy: boolean;
  act: (fn: () => Promise<Result<unknown>>, ok?: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(about.text ?? "");
  const when = about.at ? <LocalDate value={about.at} /> : null;
  return (
    <section
      aria-labelledby="about-heading"
      className="grid gap-2 rounded-lg border border-border p-4"
      data-testid="about-you"
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id="about-heading" className="font-medium">
          What Mnemo knows about you
        </h2>
        <span className="text-xs text-muted-foreground">
          {about.edited ? (
            <>written by you{when && <> on {when}</>}</>
          ) : when ? (
            <>summarised on {when}</>
          ) : about.text ? (
            "being written again from what may be mentioned; not sent to the model until then"
          ) : null}
        </span>
      </div>
      {editing ? (
        <form
          className="grid gap-2"
          onSubmit={(e) => {
            e.preventDefault();
            setEditing(false);
            act(() => saveAboutAction(draft), draft.trim() ? "Saved in your words." : "Cleared.");
          }}
        >
          <label htmlFor="about-text" className="sr-only">
            What Mnemo knows about you
          </label>
          <textarea
            id="about-text"
            className="min-h-24 w-full rounded-md border border-input bg-background p-2 text-sm"
            value={draft}
            maxLength={ABOUT_MAX_CHARS}
            autoFocus
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => e.key === "Escape" && setEditing(false)}
          />
          <div className="flex gap-2">
            <Button size="sm" type="submit">
              Save
            </Button>
            <Button size="sm" type="button" variant="ghost" onClick={() => setEditing(false)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : (
        <p className="whitespace-pre-wrap text-sm" data-testid="about-text">
          {about.text ??
            "Nothing yet. Once Mnemo has a few memories, the memory model writes a short summary here after tidying them up."}
        </p>
      )}
      {!editing && (
        <div className="flex flex-wrap gap-2">
          <Button
            size="sm"
            variant="outline"
            disabled={busy}
            onClick={() => {
              setDraft(about.text ?? "");
              setEditing(true);
            }}
          >
            Edit
          </Button>
          {(about.edited || about.text) && (
            <Button
              size="sm"
              variant="ghost"
              disabled={busy}
              onClick={() => act(() => releaseAboutAction(), "It will be written again from your memories shortly.")}
            >
              Write it again from my memories
            </Button>
          )}
        </div>
      )}
      <p className="text-xs text-muted-foreground">
        When your memories no longer all fit in a prompt, this summary goes in their place.
      </p>
    </section>
  );
}
