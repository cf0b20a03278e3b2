// The exact search's ranking (lib/memory/vectors.ts): the k best rows, best first, ties by id, whatever order the
// rows are kept in, as a full sort of every row gives them. The memories ranked after a guess, ranked again only when
// their vectors are not the ones the guess ranked.
import { describe, expect, it } from "vitest";
import { bestOf, normalized } from "@/lib/memory/vector-scores";
import { scanMemories, scanMemoriesAfter } from "@/lib/memory/kept-memory-vectors";

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

describe("the memory ranking after a guess", () => {
  const row = (id: string, v: number[]) => ({ id, vector: Float32Array.from(normalized(v)) });
  const q = [1, 0.2, 0];

  it("is the guess's when it ranked the same vectors, and its own when one changed or one is new", () => {
    const rows = [row("a", [1, 0, 0]), row("b", [0, 1, 0]), row("c", [1, 0.3, 0])];
    const guess = { rows, hits: scanMemories(rows, q, 2) };
    expect(scanMemoriesAfter(guess, [...rows], q, 2)).toBe(guess.hits);
    // The nearest memory's text changed since the guess: its new vector ranks it last.
    const changed = [rows[0], rows[1], row("c", [0, 0, 1])];
    expect(scanMemoriesAfter(guess, changed, q, 2).map((h) => h.id)).toEqual(["a", "b"]);
    const added = [...rows, row("d", [1, 0.2, 0])];
    expect(scanMemoriesAfter(guess, added, q, 2).map((h) => h.id)).toEqual(["d", "c"]);
  });
});
