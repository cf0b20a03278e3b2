// "What the model sees": the memory profile's size against the memory budget
// (the whole profile goes in when it fits the share marked on the meter; the
// rest of the budget is kept for what a message is about), how many memories
// go into every answer, and whether recall also works by meaning (an embedding
// model is set) or by words only.
export type ProfileMeterProps = {
  /** The project whose chats the meter describes (its memories, and general ones when shared); null: no project. */
  place?: { name: string; shared: boolean } | null;
  /** Active memories kept in projects, which chats in no project never see (counted when place is null). */
  inProjects?: number;
  count: number;
  cost: number;
  budget: number;
  /** The most the whole profile may take. */
  share: number;
  fits: boolean;
  alwaysIn: number;
  /** Recall by meaning: with which model, and how many of the user's rows still wait for a vector; null: off. */
  semantic: { builtin: boolean; waiting: number } | null;
};

export function ProfileMeter({
  place = null,
  inProjects = 0,
  count,
  cost,
  budget,
  share: profileShare,
  fits,
  alwaysIn,
  semantic,
}: ProfileMeterProps) {
  const share = budget > 0 ? Math.min(100, Math.round((cost / budget) * 100)) : 100;
  const mark = budget > 0 ? Math.round((profileShare / budget) * 100) : 100;
  return (
    <section
      aria-labelledby="profile-heading"
      className="grid gap-2 rounded-lg border border-border p-4 text-sm"
      data-testid="profile-meter"
    >
      <h2 id="profile-heading" className="font-medium">
        What the model sees{place ? ` in ${place.name}` : inProjects > 0 ? " in chats outside projects" : ""}
      </h2>
      {place ? (
        <p className="text-muted-foreground">
          {place.shared
            ? "This project's chats get its own memories and your general ones."
            : "This project's chats get only its own memories."}
        </p>
      ) : inProjects > 0 ? (
        <p className="text-muted-foreground">
          {inProjects === 1
            ? "1 more memory is kept in a project and goes only into its chats"
            : `${inProjects.toLocaleString("en-US")} more memories are kept in projects and go only into their chats`}{" "}
          (choose a project under Scope to see its share).
        </p>
      ) : null}
      <div
        className="relative h-2.5 w-full overflow-hidden rounded-full bg-muted"
        role="meter"
        aria-label="Memories against the memory budget"
        aria-valuemin={0}
        aria-valuemax={budget}
        aria-valuenow={Math.min(cost, budget)}
      >
        <div className={fits ? "h-full bg-primary" : "h-full bg-amber-500"} style={{ width: `${share}%` }} />
        {/* Where the whole profile stops going in first. */}
        <div className="absolute top-0 h-full w-0.5 bg-foreground/70" style={{ left: `${mark}%` }} aria-hidden="true" />
      </div>
      <p>
        Your {count} active {count === 1 ? "memory takes" : "memories take"} {cost.toLocaleString("en-US")} of{" "}
        {budget.toLocaleString("en-US")} tokens.{" "}
        {count === 0
          ? "Nothing is added to answers yet."
          : fits
            ? count === 1
              ? "It goes into every answer."
              : "All of them go into every answer."
            : `Together they take more than the ${profileShare.toLocaleString("en-US")} tokens the whole profile may ` +
              `fill (the rest is kept for what a message is about). ${alwaysIn} always go in (pinned, said by you, ` +
              `most used); the other ${count - alwaysIn} go in when a message is relevant to them or room is left ` +
              `(marked “only when relevant” below).`}
      </p>
      <p className="text-muted-foreground" data-testid="recall-mode">
        {semantic
          ? `Relevance is judged by meaning${semantic.builtin ? " (by the sentence encoder built into Mnemo, on this server)" : ""} and by words.` +
            (semantic.waiting
              ? ` ${semantic.waiting.toLocaleString("en-US")} of your memories and messages ${semantic.waiting === 1 ? "is" : "are"} still waiting for ${semantic.waiting === 1 ? "its" : "their"} vector; until then ${semantic.waiting === 1 ? "it is" : "they are"} found by words.`
              : "")
          : "Relevance is judged by words (and, in English, related words: “martial arts” finds taekwondo): no embedding model is set, so a question worded differently from a memory may miss it."}
      </p>
    </section>
  );
}
