import type { whereMemoriesWent } from "@/lib/memory/disclosure";
import { count } from "@/lib/text/plural";

type Trail = Awaited<ReturnType<typeof whereMemoriesWent>>;

const clients = (list: Array<{ client: string; times: number }>) =>
  list.map((c) => `${c.client} ${c.times}`).join(", ");

/** "Where did my memories go?": per destination, then per memory, for the last days. Server-rendered. */
export function MemoryTrail({ trail }: { trail: Trail }) {
  if (!trail.destinations.length)
    return (
      <p className="text-sm text-muted-foreground" data-testid="memory-trail-empty">
        No memory was sent to a model in the last {trail.days} days.
      </p>
    );
  return (
    <div className="grid gap-4" data-testid="memory-trail">
      <ul className="grid gap-1 text-sm">
        {trail.destinations.map((d) => (
          <li key={`${d.model}@${d.endpoint}`} data-testid="memory-destination">
            <span className="font-medium">{d.model}</span> at {d.endpoint}
            {d.local ? " (on this machine)" : ""}: {count(d.times, "request")} carrying{" "}
            {count(d.memories, "memory", "memories")} ({clients(d.byClient)})
          </li>
        ))}
      </ul>
      <ul className="grid gap-2 text-sm">
        {trail.memories.map((m) => (
          <li key={m.memoryId} className="rounded-md border border-border p-2" data-testid="memory-sent">
            <p className="font-medium">
              {m.text}
              {m.private && <span className="ml-2 rounded bg-muted px-1.5 py-0.5 text-xs">private</span>}
            </p>
            <ul className="mt-1 text-xs text-muted-foreground">
              {m.destinations.map((d) => (
                <li key={`${d.model}@${d.endpoint}`}>
                  sent {count(d.times, "time")} to {d.model} at {d.endpoint} ({clients(d.byClient)})
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </div>
  );
}
