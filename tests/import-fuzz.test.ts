// Structure-aware fuzzing of the importers: every fixture (the apps' own files and ours), each value swapped for
// another type, emptied, duplicated or nested. Whatever the file says, an import ends in a report (what landed,
// what was skipped and why), never an exception, and the database holds no half-written conversation.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "@/testing/databases";
import { importConversations } from "@/lib/import/run";
import { userContext } from "@/lib/user-context";
import { AppError } from "@/lib/errors";

const DIRS = ["fixtures/import", "fixtures/import/real"].map((d) => path.join(__dirname, d));
const FILES = DIRS.flatMap((d) =>
  fs
    .readdirSync(d)
    .filter((f) => f.endsWith(".json") && !f.startsWith("truncated")) // that one is cut off on purpose
    .map((f) => path.join(d, f)),
);
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 12);

/** A small seeded generator: a failure names its seed, and the same seed makes the same file. */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

const REPLACEMENTS = (r: () => number): unknown[] => [
  null,
  "",
  0,
  -1,
  1e308,
  true,
  [],
  {},
  "x".repeat(Math.floor(r() * 300)),
  [[[[[]]]]],
  { a: { b: { c: {} } } },
  "2025-13-45T99:99:99Z",
  "\u0000\ud800",
];

function mutate(v: unknown, r: () => number, rate: number, root = false): unknown {
  if (!root && r() < rate) {
    const choices = REPLACEMENTS(r);
    return choices[Math.floor(r() * choices.length)];
  }
  if (Array.isArray(v)) {
    const out = v.map((x) => mutate(x, r, rate));
    if (out.length && r() < rate) out.push(out[Math.floor(r() * out.length)]); // a repeated entry
    if (out.length && r() < rate) out.reverse();
    return out;
  }
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mutate(x, r, rate)]));
  return v;
}

describe("importing fuzzed files", () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb("pglite");
  });
  afterAll(async () => t?.close());

  it.each(FILES.map((f) => [path.relative(__dirname, f), f]))(
    "%s: every mutation ends in a report",
    async (_n, file) => {
      const original = JSON.parse(fs.readFileSync(file, "utf8"));
      for (let round = 0; round < ROUNDS; round++) {
        const seed = crypto.createHash("sha1").update(`${file}:${round}`).digest().readUInt32LE(0);
        const r = rng(seed);
        const body = JSON.stringify(mutate(original, r, [0.02, 0.08, 0.25][round % 3], true));
        const user = await t.db.user.create({ data: { email: `fuzz-${seed}-${round}@example.com` } });
        let report;
        try {
          report = await importConversations(await userContext(t.db, user.id), [body]);
        } catch (e) {
          // A file that is no export at all is refused with a clear message (400), which is an answer too.
          if (e instanceof AppError && e.status < 500) continue;
          throw new Error(`seed ${seed} (round ${round}) threw: ${(e as Error).stack}\n${body.slice(0, 2000)}`);
        }
        expect(report.conversations + report.skipped.count + report.duplicates >= 0).toBe(true);
        // A thread that landed has its messages (each conversation is written whole or not at all).
        const threads = await t.db.thread.findMany({ where: { userId: user.id }, select: { id: true } });
        for (const th of threads)
          expect(await t.db.item.count({ where: { threadId: th.id } }), `seed ${seed}`).toBeGreaterThan(0);
      }
    },
    120_000,
  );
});
