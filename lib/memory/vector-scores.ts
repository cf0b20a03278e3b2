// Scoring vectors in the app: cosine similarity, and the exact top-k of a set of normalized vectors (the exact search
// of ./vectors.ts, the kept memory vectors of ./kept-memory-vectors.ts, attachments' passages, consolidation). No
// imports: the encoder's worker runs `dot`, `normalized` and `scanSlots` from their source (lib/llm/encoder-worker.ts).

/** A row found by meaning, with its cosine similarity to the question. */
export type VectorHit = { id: string; score: number };

/** Cosine similarity of two vectors (0 when their sizes differ or one is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Exact cosine top-k of the rows `keep` accepts, best first. Row i's vector is at i * dims in `data`, normalized, so
 * a dot product is the cosine; four sums at once, which V8 runs about three times as fast as one (10,000 rows of 512:
 * 3.6 ms against 12.8 ms with the norms and a sort of every row, measured).
 */
export function topK(
  ids: string[],
  data: Float32Array,
  q: number[],
  k: number,
  keep: (i: number) => boolean = () => true,
): VectorHit[] {
  const qn = normalized(q);
  const dims = qn.length;
  const scores = new Float64Array(ids.length).fill(-Infinity);
  for (let i = 0, o = 0; i < ids.length; i++, o += dims) if (keep(i)) scores[i] = dot(data, qn, o);
  return bestOf(ids, scores, k).map((i) => ({ id: ids[i], score: scores[i] }));
}

/** The dot product of `qn` with the vector at `o` in `v`: four sums at once (see topK). */
export function dot(v: Float32Array, qn: Float32Array, o = 0): number {
  const tail = qn.length - (qn.length % 4);
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  for (let j = 0; j < tail; j += 4) {
    a += v[o + j] * qn[j];
    b += v[o + j + 1] * qn[j + 1];
    c += v[o + j + 2] * qn[j + 2];
    d += v[o + j + 3] * qn[j + 3];
  }
  for (let j = tail; j < qn.length; j++) a += v[o + j] * qn[j];
  return a + b + c + d;
}

/** A vector scaled to length 1 (all zeros stays all zeros). */
export function normalized(v: ArrayLike<number>): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * s;
  return out;
}

/**
 * A scan of kept message vectors in the encoder's worker (./kept-vectors.ts, `startPrescan`): the rows in shared
 * memory, each row's thread as a number, the thread whose rows are skipped (-1: none), and how many best rows to give.
 */
export type SlotScan = {
  data: Float32Array;
  threads: Int32Array;
  rows: number;
  dims: number;
  k: number;
  exclude: number;
};
/** The rows scoring at least the k-th best score, every tie with it included (ties are broken by id, which only the
 *  app knows), and their scores. */
export type SlotScores = { slots: number[]; scores: number[] };

/**
 * The worker's half of the exact search: every row's score, as `topK` computes it, and the rows at or above the k-th
 * best. It runs from its source text, so it uses nothing but its arguments (`math` is this module's `dot` and
 * `normalized`, evaluated there the same way).
 */
export function scanSlots(
  math: { dot: typeof dot; normalized: typeof normalized },
  q: ArrayLike<number>,
  s: SlotScan,
): SlotScores {
  const qn = math.normalized(q);
  const scores = new Float64Array(s.rows);
  // The k-th best score, as bestOf finds it: the scores at or above a floor that rises each time 4k have gathered
  // (sorting a copy of all 10,000 cost the worker about 1 ms of each scan).
  let best: number[] = [];
  let floor = -Infinity;
  for (let i = 0, o = 0; i < s.rows; i++, o += s.dims) {
    scores[i] = s.threads[i] === s.exclude ? -Infinity : math.dot(s.data, qn, o);
    if (s.k <= 0 || scores[i] === -Infinity || scores[i] < floor) continue;
    best.push(scores[i]);
    if (best.length < 4 * s.k) continue;
    best = best.sort((x, y) => y - x).slice(0, s.k);
    floor = best[s.k - 1];
  }
  best.sort((x, y) => y - x);
  floor = s.k <= 0 ? Infinity : best.length >= s.k ? best[s.k - 1] : -Infinity;
  const out: SlotScores = { slots: [], scores: [] };
  for (let i = 0; i < s.rows; i++) {
    if (scores[i] === -Infinity || scores[i] < floor) continue;
    out.slots.push(i);
    out.scores.push(scores[i]);
  }
  return out;
}

/**
 * The k best rows, best first; ties by id, so every instance ranks alike whatever order it keeps the rows in. Rows
 * are gathered above a floor that rises each time 4k have gathered (cut back to the k best): sorting a copy of all
 * 10,000 scores to find the k-th took 1.1 ms of each turn, this 0.2 ms.
 */
export function bestOf(ids: string[], scores: Float64Array, k: number): number[] {
  const order = (x: number, y: number) => scores[y] - scores[x] || (ids[x] < ids[y] ? -1 : ids[x] > ids[y] ? 1 : 0);
  const best: number[] = [];
  if (k <= 0) return best;
  let floor = -Infinity;
  for (let i = 0; i < scores.length; i++) {
    if (scores[i] === -Infinity || scores[i] < floor) continue;
    best.push(i);
    if (best.length < 4 * k) continue;
    best.sort(order).length = k;
    floor = scores[best[k - 1]];
  }
  return best.sort(order).slice(0, k);
}
