// Token counts for budgets (lib/memory/tokens.ts). Long runs without spaces
// (base64 images in imported chats, pasted blobs) are counted in slices, since
// the tokenizer's cost grows with the square of a word's length: the count must
// stay on the safe side of exact, and close to it.
import { describe, expect, it } from "vitest";
import { countTokens as exact } from "gpt-tokenizer/encoding/o200k_base";
import { countTokens, estimateTokens } from "@/lib/memory/tokens";

describe("countTokens", () => {
  it("is exact for ordinary text", () => {
    const text = "We adopted a greyhound last spring; she sleeps on the sofa. ".repeat(50);
    expect(countTokens(text)).toBe(exact(text));
    expect(countTokens("")).toBe(0);
  });

  it("counts long runs without spaces never below the exact count, and within 2% of it", () => {
    const cases = [
      `see data:image/png;base64,${"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==".repeat(60)} ok`,
      "😀".repeat(3000),
      `${"word ".repeat(200)}${"ab1-".repeat(800)} and the end`,
    ];
    for (const text of cases) {
      const want = exact(text);
      expect(countTokens(text)).toBeGreaterThanOrEqual(want);
      expect(countTokens(text)).toBeLessThanOrEqual(Math.ceil(want * 1.02));
    }
  });
});

describe("countTokens, counted again", () => {
  it("gives a text counted before its own count again, never another text's of the same length", () => {
    // Same length, different counts: a memo keyed by anything less than the text would mix them up.
    const texts = ["a".repeat(120), "a b ".repeat(30), "The garden needs water ".repeat(5).slice(0, 120)];
    for (let round = 0; round < 3; round++) for (const text of texts) expect(countTokens(text)).toBe(exact(text));
    expect(new Set(texts.map((t) => countTokens(t))).size).toBe(3);
    // Well past what is kept: the oldest are dropped and counted again, still right.
    const many = Array.from({ length: 60_000 }, (_, i) => `message number ${i} about the garden and its long hedge`);
    for (const text of many) countTokens(text);
    for (const text of [...many.slice(0, 3), ...texts]) expect(countTokens(text)).toBe(exact(text));
  });
});

describe("estimateTokens", () => {
  it("is exact up to a few pages, and within 5% past them, whatever the text", () => {
    const short = "A page of ordinary notes about the garden. ".repeat(200);
    expect(estimateTokens(short)).toBe(countTokens(short));
    const varied = Array.from({ length: 200_000 }, (_, i) => (i * 7919).toString(36)).join(" ");
    const mixed = `${"Prose first, the way people write. ".repeat(3000)}${"const x = f(a[i], b);\n".repeat(3000)}`;
    for (const text of [varied, mixed]) expect(estimateTokens(text) / countTokens(text)).toBeCloseTo(1, 1);
  });
});
