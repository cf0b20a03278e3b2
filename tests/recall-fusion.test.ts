// Fusion's vector score (lib/memory/recall.ts): absolute, not by rank, so the nearest of a flat list of neighbours
// (nothing stands out: a question the encoder has no good match for) cannot outweigh a passage holding the question's
// words, while a neighbour that stands out still scores high (a paraphrase with no shared word).
import { describe, expect, it } from "vitest";
import { backgroundOf, vectorScores } from "@/lib/memory/recall";

const hits = (scores: number[]) => scores.map((score, i) => ({ id: `m${i}`, score }));

describe("fusion's vector scores", () => {
  it("scores the nearest of a flat list low, however it ranks", () => {
    const [nearest] = vectorScores(hits([0.41, 0.4, 0.39, 0.38, 0.37, 0.36, 0.35]));
    expect(nearest).toBeLessThan(0.1);
  });

  it("scores a neighbour that stands out high, and the rest by how far they stand above the background", () => {
    const s = vectorScores(hits([0.82, 0.45, 0.4, 0.38, 0.36, 0.35]));
    expect(s[0]).toBeGreaterThan(0.7);
    expect(s[1]).toBeLessThan(0.2);
    expect(s.at(-1)).toBe(0);
  });

  it("gives a lone neighbour its similarity, and never a negative score", () => {
    expect(vectorScores(hits([0.6]))).toEqual([0.6]);
    expect(vectorScores(hits([-0.2, -0.3])).every((x) => x >= 0)).toBe(true);
  });
});

describe("fusion's background at a small budget", () => {
  it("is that of every neighbour found, not only of those whose passages were read", () => {
    // A small budget reads the passages of its first few vector hits only; their scores must be what a large
    // budget gives them, or a small budget would weigh meaning less against words.
    const found = hits([0.82, 0.7, 0.66, 0.6, 0.55, 0.5, 0.47, 0.45, 0.41, 0.4]);
    const read = found.slice(0, 3);
    expect(vectorScores(read, backgroundOf(found))).toEqual(vectorScores(found).slice(0, 3));
    expect(vectorScores(read)[2]).toBe(0);
  });
});
