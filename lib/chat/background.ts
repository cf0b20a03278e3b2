// How a request hands work to run after its response: the chat route passes Next.js's `after()` (it keeps a
// serverless instance alive for the task); tests and scripts collect the tasks and await them. The work itself
// (titles, summaries, learning) is durable: it is queued as jobs (lib/jobs) before the answer is reported done,
// and the deferred task only drains that queue sooner.
export type Defer = (task: () => Promise<void>) => void;
