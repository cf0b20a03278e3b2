// The paraphrase benchmark set (scripts/bench/data/paraphrase.json) is only a
// test of recall by meaning if no question shares a searchable word with the
// turn that answers it: checked here with the same English stemming the
// lexical search uses.
import fs from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDb, type TestDb } from "@/testing/databases";
import { queryTerms } from "@/lib/memory/long-term";

type Set = Record<string, unknown> & { qa: Array<{ question: string; evidence: string[] }> };
const set: Set = JSON.parse(fs.readFileSync("scripts/bench/data/paraphrase.json", "utf8"));
const turns = new Map<string, string>();
for (const [k, v] of Object.entries(set))
  if (/^session_\d+$/.test(k))
    for (const t of v as Array<{ dia_id: string; text: string }>) turns.set(t.dia_id, t.text);

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb("pglite");
});
afterAll(async () => t?.close());

it("no question shares a searchable word with its evidence turn", async () => {
  expect(set.qa.length).toBeGreaterThanOrEqual(20);
  const overlaps: string[] = [];
  for (const qa of set.qa) {
    const terms = queryTerms(qa.question);
    for (const id of qa.evidence) {
      const [{ shared }] = await t.db.$queryRawUnsafe<Array<{ shared: string[] }>>(
        `SELECT COALESCE(array_agg(w), '{}') AS shared FROM unnest($2::text[]) AS w
         WHERE numnode(plainto_tsquery('english', w)) > 0 AND to_tsvector('english', $1) @@ plainto_tsquery('english', w)`,
        turns.get(id),
        terms,
      );
      if (shared.length) overlaps.push(`${qa.question} / ${id}: ${shared.join(", ")}`);
    }
  }
  expect(overlaps).toEqual([]);
});
