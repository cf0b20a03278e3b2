// Citations of memories in an answer: read for attribution, never shown.
import { describe, expect, it } from "vitest";
import { citations, stripCitations } from "@/lib/memory/citation-format";

describe("memory citations", () => {
  it("are read and removed, several and in any case", () => {
    const a = "Walk Biscuit [memory: Has a golden retriever] and rest. [Memory:Works as a nurse]\nBye";
    expect(citations(a)).toEqual(["Has a golden retriever", "Works as a nurse"]);
    expect(stripCitations(a)).toBe("Walk Biscuit and rest.\nBye");
  });

  it("leave other brackets alone: code, links, footnotes", () => {
    const a = "Use `arr[1]` or [the docs](https://x.y) [1].";
    expect(stripCitations(a)).toBe(a);
    expect(citations(a)).toEqual([]);
  });

  it("while streaming, a citation not finished yet is hidden too", () => {
    expect(stripCitations("Walk the dog [memory: Has a gold", true)).toBe("Walk the dog");
    expect(stripCitations("Walk the dog [mem", true)).toBe("Walk the dog");
    expect(stripCitations("Walk the dog [mem", false)).toBe("Walk the dog [mem");
    expect(stripCitations("See arr[", true)).toBe("See arr");
    expect(stripCitations("Walk the dog [memory: the [old one", true)).toBe("Walk the dog");
  });

  it("take time linear in the answer, whatever it holds (long runs of spaces before no citation)", () => {
    // Each of these took seconds when the pattern began with the spaces a citation takes with it.
    for (const text of [`1${" ".repeat(200_000)}x`, "\t".repeat(200_000), `${" ".repeat(200_000)}[mem`]) {
      const t0 = performance.now();
      stripCitations(text, true);
      citations(text);
      expect(performance.now() - t0).toBeLessThan(500);
    }
    expect(stripCitations(`a${" ".repeat(100_000)}[memory: x]b`)).toBe("ab");
  });
});
