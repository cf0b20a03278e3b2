// Trimming invariants, checked on many random histories.
import { describe, expect, it } from "vitest";
import { groupTurns, selectWindow, type WindowItem } from "@/lib/memory/window";

function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function randomHistory(r: () => number): WindowItem[] {
  const items: WindowItem[] = [];
  let n = 0;
  const turns = 1 + Math.floor(r() * 30);
  for (let t = 0; t < turns; t++) {
    items.push({
      id: `i${n++}`,
      role: "user",
      tokens: 5 + Math.floor(r() * 200),
      status: "complete",
      content: "q",
      toolCalls: null,
      toolCallId: null,
    });
    const calls = r() < 0.3 ? 1 + Math.floor(r() * 3) : 0;
    for (let c = 0; c < calls; c++) {
      const id = `call${n}`;
      items.push({
        id: `i${n++}`,
        role: "assistant",
        tokens: 10 + Math.floor(r() * 50),
        status: "complete",
        content: "",
        toolCalls: [{ id, name: "search_memory", arguments: "{}" }],
        toolCallId: null,
      });
      items.push({
        id: `i${n++}`,
        role: "tool",
        tokens: 5 + Math.floor(r() * 300),
        status: "complete",
        content: "r",
        toolCalls: null,
        toolCallId: id,
      });
    }
    if (t < turns - 1 || r() < 0.7)
      items.push({
        id: `i${n++}`,
        role: "assistant",
        tokens: 5 + Math.floor(r() * 400),
        status: "complete",
        content: "a",
        toolCalls: null,
        toolCallId: null,
      });
  }
  return items;
}

describe("selectWindow", () => {
  it("holds its invariants on 2,000 random histories and budgets", () => {
    const r = rng(42);
    for (let k = 0; k < 2000; k++) {
      const items = randomHistory(r);
      const budget = Math.floor(r() * 3000);
      const { kept, dropped, tokens } = selectWindow(items, budget);
      // kept is a suffix, dropped the prefix: together the whole history, in order
      expect([...dropped, ...kept]).toEqual(items);
      expect(kept.length).toBeGreaterThan(0);
      expect(tokens).toBe(kept.reduce((s, i) => s + i.tokens, 0));
      // within budget, unless only the newest turn is kept
      const turns = groupTurns(kept);
      if (turns.length > 1) expect(tokens).toBeLessThanOrEqual(budget);
      // starts at a question: no answer, tool call or result without its user message
      expect(kept[0].role).toBe("user");
      // every tool result's call is kept
      const callIds = new Set(kept.flatMap((i) => i.toolCalls?.map((c) => c.id) ?? []));
      for (const i of kept) if (i.role === "tool") expect(callIds.has(i.toolCallId!)).toBe(true);
      // greedy: the next older turn would not have fit
      if (dropped.length) {
        const prev = groupTurns(dropped).at(-1)!;
        expect(tokens + prev.reduce((s, i) => s + i.tokens, 0)).toBeGreaterThan(budget);
      }
    }
  });

  it("keeps everything when it fits", () => {
    const items = randomHistory(rng(7));
    const total = items.reduce((s, i) => s + i.tokens, 0);
    expect(selectWindow(items, total).dropped).toEqual([]);
  });
});
