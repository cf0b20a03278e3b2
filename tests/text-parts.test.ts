// A long text in parts (lib/text/parts.ts): nothing dropped, none too long, cut where the text pauses.
import { describe, expect, it } from "vitest";
import { splitIntoParts } from "@/lib/text/parts";

describe("splitIntoParts", () => {
  it("keeps a short text whole", () => {
    expect(splitIntoParts("One paragraph.", 100)).toEqual(["One paragraph."]);
    expect(splitIntoParts("", 100)).toEqual([""]);
  });

  it("ends parts at a blank line, else a line break, else a space, when one is in the part's second half", () => {
    const paragraphs = `${"a".repeat(70)}\n\n${"b".repeat(70)}\n\n${"c".repeat(70)}`;
    expect(splitIntoParts(paragraphs, 100)).toEqual([`${"a".repeat(70)}\n\n`, `${"b".repeat(70)}\n\n`, "c".repeat(70)]);
    expect(splitIntoParts(`${"a".repeat(60)}\n${"b".repeat(60)}`, 100)).toEqual([
      `${"a".repeat(60)}\n`,
      "b".repeat(60),
    ]);
    expect(splitIntoParts(`${"a".repeat(60)} ${"b".repeat(60)}`, 100)).toEqual([`${"a".repeat(60)} `, "b".repeat(60)]);
  });

  it("cuts text without pauses at the limit, never inside a character", () => {
    const emoji = "😀".repeat(150); // 300 UTF-16 units
    const parts = splitIntoParts(emoji, 101);
    expect(parts.join("")).toBe(emoji);
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(101);
      expect(/^(?:😀)+$/u.test(p)).toBe(true);
    }
  });
});
