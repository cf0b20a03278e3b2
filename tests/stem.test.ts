// The stems kept by lib/text/stem.ts are the stemmer's own, however often and in whatever order words come.
import { describe, expect, it } from "vitest";
import { stemmer } from "stemmer";
import { stem } from "@/lib/text/stem";

describe("stems kept between calls", () => {
  it("gives the stemmer's stem for every word, the first time and again", () => {
    const words = ["running", "runs", "happiness", "happy", "generalization", "x", "2023", "élan", "a".repeat(60)];
    const first = words.map(stem);
    expect(first).toEqual(words.map((w) => stemmer(w)));
    expect([...words].reverse().map(stem)).toEqual([...first].reverse());
    expect(stem("running")).not.toBe(stem("happiness"));
  });
});
