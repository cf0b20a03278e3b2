// The exact search's ranking (lib/memory/vectors.ts): the k best rows, best first, ties by id, whatever order the
// rows are kept in, as a full sort of every row gives them.
import { describe, expect, it } from "vitest";
import { bestOf } from "@/lib/memory/vector-scores";

function reference(ids: string[], scores: Float64Array, k: number): number[] {
  return [...scores.keys()]
    .filter((i) => scores[i] > -Infinity)
    .sort((x, y) => scores[y] - scores[x] || (ids[x] < ids[y] ? -1 : ids[x] > ids[y] ? 1 : 0))
    .slice(0, k);
}

describe("bestOf", () => {
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

  it("gives what a full sort gives, with many ties and rows left out, for any k", () => {
    for (const [n, k] of [
      [10_000, 120],
      [1_000, 40],
      [50, 120],
      [500, 1],
      [0, 10],
    ]) {
      const ids = Array.from({ length: n }, (_, i) => `row${Math.floor(rand() * 1e9)}-${i}`);
      // Scores on a coarse grid, so ties are common; every tenth row left out (another thread).
      const scores = Float64Array.from({ length: n }, (_, i) => (i % 10 === 3 ? -Infinity : Math.round(rand() * 50)));
      expect(bestOf(ids, scores, k)).toEqual(reference(ids, scores, k));
    }
  });

  it("ranks alike whatever order the rows are kept in", () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => `m${i}`);
    const scores = Float64Array.from(ids, () => Math.round(rand() * 20));
    const reversed = [...ids.keys()].reverse();
    const again = bestOf(
      reversed.map((i) => ids[i]),
      Float64Array.from(reversed, (i) => scores[i]),
      100,
    ).map((i) => ids[reversed[i]]);
    expect(again).toEqual(bestOf(ids, scores, 100).map((i) => ids[i]));
    expect(bestOf(ids, scores, 0)).toEqual([]);
  });
});
