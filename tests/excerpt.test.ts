// Excerpts of long messages in recalled passages (lib/memory/excerpt.ts): the
// part that matches the question, marked where text was left out, within the cap.
import { describe, expect, it } from "vitest";
import { excerpt } from "@/lib/memory/excerpt";
import { indexWords } from "@/lib/crypto/content";
import { countTokens } from "@/lib/memory/tokens";

const asked = (q: string) => new Set(indexWords(q));
const cut = (text: string, q: string, cap: number) => excerpt(text, countTokens(text), asked(q), cap);
const filler = (topic: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) => `Day ${i + 1} of the ${topic} has a museum, a long lunch and an early night.`,
  ).join(" ");

describe("excerpt", () => {
  it("leaves a message within the cap as it is", () => {
    expect(cut("We adopted a greyhound.\nShe sleeps all day.", "greyhound", 50)).toBe(
      "We adopted a greyhound.\nShe sleeps all day.",
    );
  });

  it("shows the sentences that match the question, within the cap, marked where text was left out", () => {
    const text = `${filler("tour", 40)} In Hakone, stay at a ryokan with an onsen and a view of Fuji. ${filler("trip", 40)}`;
    const out = cut(text, "which ryokan did you suggest in Hakone?", 100);
    expect(out).toContain("In Hakone, stay at a ryokan with an onsen");
    expect(out.startsWith("… ")).toBe(true);
    expect(out.endsWith(" …")).toBe(true);
    expect(countTokens(out)).toBeLessThanOrEqual(100);
    expect(countTokens(out)).toBeGreaterThan(60); // the room left is filled with the sentences around it
  });

  it("splits lists and code at line breaks, so the matching line is found", () => {
    const list = Array.from({ length: 200 }, (_, i) =>
      i === 150 ? "- pack the hiking boots for Hakone" : `- item ${i} to remember`,
    ).join("\n");
    const out = cut(list, "did I pack boots?", 40);
    expect(out).toContain("- pack the hiking boots for Hakone");
    expect(countTokens(out)).toBeLessThanOrEqual(40);
  });

  it("without a matching sentence shows the message's start", () => {
    const out = cut(filler("tour", 40), "what about kumquats?", 60);
    expect(out.startsWith("Day 1 of the tour")).toBe(true);
    expect(out.endsWith(" …")).toBe(true);
  });

  it("cuts one overlong sentence around its match, and an overlong word by characters without splitting an emoji", () => {
    const sentence = `${"very ".repeat(300)}important kumquat ${"and more ".repeat(300)}`;
    const out = cut(sentence, "kumquat", 40);
    expect(out).toContain("important kumquat");
    expect(countTokens(out)).toBeLessThanOrEqual(40);
    const blob = "😀".repeat(50_000);
    const b = cut(blob, "anything", 30);
    expect(b.length).toBeLessThan(200);
    expect(b.replace(/ …$/, "")).toMatch(/^(😀)+$/u); // no lone half of a surrogate pair
  });

  it("a message of a million characters is read as far as the search reads it, and says it goes on", () => {
    const read = filler("tour", 1400); // ~100,000 characters, the part the search reads
    const text = `${read} The ferry to Capri leaves at nine. ${filler("cruise", 13_000)} The lost key is under the mat.`;
    expect(text.length).toBeGreaterThan(1_000_000);
    const tokens = countTokens(text);
    const out = excerpt(text, tokens, asked("when does the ferry to Capri leave?"), 60);
    expect(out).toContain("The ferry to Capri leaves at nine.");
    expect(out.endsWith(" …")).toBe(true);
    // Nothing past what the search reads is looked at: a question about the end finds the start instead.
    expect(excerpt(text, tokens, asked("where is the lost key?"), 60)).not.toContain("lost key");
  });
});
