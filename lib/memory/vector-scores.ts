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
 * Cosine top-k of the rows `keep` accepts, best first. Row i's vector is at i * dims in `data`, normalized, so a dot
 * product is the cosine; four sums at once, which V8 runs about three times as fast as one (10,000 rows of 512: 3.6 ms
 * against 12.8 ms with the norms and a sort of every row, measured). Given the rows' `signs` (`signsOf`), a large set
 * is ranked exactly on its shortlist only (`shortlist`).
 */
export function topK(
  ids: string[],
  data: Float32Array,
  q: number[],
  k: number,
  keep: (i: number) => boolean = () => true,
  signs?: Int32Array | null,
): VectorHit[] {
  const qn = normalized(q);
  const dims = qn.length;
  const scores = new Float64Array(ids.length).fill(-Infinity);
  const rows = signs ? shortlist(signs, signsOf(qn), ids.length, shortlistSize(ids.length, k), keep) : null;
  if (rows) for (const i of rows) scores[i] = dot(data, qn, i * dims);
  else for (let i = 0, o = 0; i < ids.length; i++, o += dims) if (keep(i)) scores[i] = dot(data, qn, o);
  return bestOf(ids, scores, k).map((i) => ({ id: ids[i], score: scores[i] }));
}

/**
 * A shortlist by the vectors' signs, as binary quantization does: each kept row also keeps one bit per number (is it
 * above zero), and a question's bits differ from a near row's in few places. Counting the differing bits of 10,000
 * rows of 512 takes about 0.3 ms where their dot products take 5.5, so the rows are ranked exactly on the shortlist
 * only: the rows whose bits differ least, about 10 per row asked for and an eighth of the set at least. On the dev
 * set's real vectors (the built-in encoder), that found 99.99 % of the exact top 40 (docs/benchmarks.md); pgvector's
 * index is approximate too. Vectors of fewer than SHORTLIST_MIN_DIMS numbers (too few bits to tell rows apart: their
 * sets keep no signs), and sets no larger than their shortlist, are ranked whole.
 */
export const SHORTLIST_MIN_DIMS = 128;
export const shortlistSize = (rows: number, k: number) => Math.max(10 * k, Math.ceil(rows / 8));

/** A vector's signs, one bit per number (32 to an int), written at `at` in `out` (a new array when none is given). */
export function signsOf(v: ArrayLike<number>, out?: Int32Array, at = 0): Int32Array {
  const words = Math.ceil(v.length / 32);
  const into = out ?? new Int32Array(words);
  into.fill(0, at, at + words);
  for (let i = 0; i < v.length; i++) if (v[i] > 0) into[at + (i >> 5)] |= 1 << (i & 31);
  return into;
}

/**
 * The rows `keep` accepts whose signs differ least from the question's (`qs`): every row within the smallest count of
 * differing bits that `want` rows reach, ties included, so the list does not depend on the rows' order. Null when the
 * rows are few enough to rank whole. Self-contained: the encoder's worker runs it from its source.
 */
export function shortlist(
  signs: Int32Array,
  qs: Int32Array,
  rows: number,
  want: number,
  keep: (i: number) => boolean,
): number[] | null {
  const words = qs.length;
  if (rows <= want) return null;
  const differ = new Uint16Array(rows);
  const counts = new Int32Array(words * 32 + 1);
  for (let i = 0, o = 0; i < rows; i++, o += words) {
    if (!keep(i)) {
      differ[i] = 0xffff;
      continue;
    }
    let n = 0;
    for (let w = 0; w < words; w++) {
      let x = signs[o + w] ^ qs[w];
      x -= (x >>> 1) & 0x55555555;
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      n += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    differ[i] = n;
    counts[n]++;
  }
  let limit = 0;
  for (let reached = counts[0]; reached < want && limit < counts.length - 1;) reached += counts[++limit];
  const out: number[] = [];
  for (let i = 0; i < rows; i++) if (differ[i] <= limit) out.push(i);
  return out;
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
 * memory, each row's thread as a number, the thread whose rows are skipped (-1: none), how many best rows to give, and
 * the rows' signs when the set keeps them (`shortlist`).
 */
export type SlotScan = {
  data: Float32Array;
  threads: Int32Array;
  signs: Int32Array | null;
  rows: number;
  dims: number;
  k: number;
  exclude: number;
};
/** The rows scoring at least the k-th best score, every tie with it included (ties are broken by id, which only the
 *  app knows), and their scores. */
export type SlotScores = { slots: number[]; scores: number[] };

/** What the worker evaluates from this module's source (lib/llm/encoder-worker.ts). */
export type ScanMath = {
  dot: typeof dot;
  normalized: typeof normalized;
  signsOf: typeof signsOf;
  shortlist: typeof shortlist;
  shortlistSize: typeof shortlistSize;
};

/**
 * The worker's half of the search: the scores of the rows `topK` would score, as it computes them, and the rows at or
 * above the k-th best. It runs from its source text, so it uses nothing but its arguments (`math`: this module's
 * functions, evaluated there the same way).
 */
export function scanSlots(math: ScanMath, q: ArrayLike<number>, s: SlotScan): SlotScores {
  // No functions declared in here: a bundler may wrap a named one in a helper the worker does not have.
  const qn = math.normalized(q);
  const listed = s.signs
    ? math.shortlist(
        s.signs,
        math.signsOf(qn),
        s.rows,
        math.shortlistSize(s.rows, s.k),
        (i) => s.threads[i] !== s.exclude,
      )
    : null;
  const scores = new Float64Array(s.rows).fill(-Infinity);
  // The k-th best score, as bestOf finds it: the scores at or above a floor that rises each time 4k have gathered
  // (sorting a copy of all 10,000 cost the worker about 1 ms of each scan).
  let best: number[] = [];
  let floor = -Infinity;
  const count = listed ? listed.length : s.rows;
  for (let n = 0; n < count; n++) {
    const i = listed ? listed[n] : n;
    if (!listed && s.threads[i] === s.exclude) continue;
    scores[i] = math.dot(s.data, qn, i * s.dims);
    if (s.k <= 0 || scores[i] < floor) continue;
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
