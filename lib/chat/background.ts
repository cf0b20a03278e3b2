// Work that runs after the answer, off the hot path (titles, summaries, and
// later memory extraction). In a request, Next.js's `after()` keeps it alive
// past the response; tests and scripts await the returned promises instead.
export type Defer = (task: () => Promise<void>) => void;

export function runDetached(label: string, task: () => Promise<void>): Promise<void> {
  return task().catch((e) => console.error(`[mnemo] background ${label} failed: ${(e as Error).message}`));
}
