// Each database function has one source, prisma/sql/functions/<name>.sql, and the migrations must make exactly
// those functions: a source changed without its migration (npm run db:functions -- <name>) fails here.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { driftMigration, functionDrift, functionSources } from "@/lib/db/sql-functions";

describe("database functions", () => {
  it("the migrations make exactly the functions of prisma/sql/functions", async () => {
    const sources = functionSources();
    expect(sources.length).toBeGreaterThan(10);
    const drift = await functionDrift(sources);
    expect({ changed: drift.changed.map((s) => s.name), stale: drift.stale, retyped: drift.retyped }).toEqual({
      changed: [],
      stale: [],
      retyped: [],
    });
  });

  it("each source defines the one function it is named after", () => {
    for (const s of functionSources()) {
      const made = [...s.sql.matchAll(/CREATE OR REPLACE FUNCTION\s+(\w+)\s*\(/g)].map((m) => m[1]);
      expect(made, s.file).toEqual([s.name]);
    }
  });

  it("a source changed without a migration is found, with the migration that would bring the database level", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-fn-"));
    for (const s of functionSources()) fs.copyFileSync(s.file, path.join(dir, `${s.name}.sql`));
    // A new body for one function, a new signature for another (its old one must be dropped), and new returned
    // columns for a third (PostgreSQL replaces it only after a DROP).
    const usage = path.join(dir, "mnemo_usage_today.sql");
    fs.writeFileSync(
      usage,
      fs.readFileSync(usage, "utf8").replace("$$", () => "$$\n  -- changed\n"),
    );
    const tag = path.join(dir, "mnemo_user_tag.sql");
    fs.writeFileSync(
      tag,
      fs.readFileSync(tag, "utf8").replace(/mnemo_user_tag\(\s*(\w+) text\)/, "mnemo_user_tag($1 varchar)"),
    );
    const threads = path.join(dir, "mnemo_searchable_threads.sql");
    fs.writeFileSync(
      threads,
      fs
        .readFileSync(threads, "utf8")
        .replace('"createdAt" timestamp,', '"createdAt" timestamp, extra text,')
        .replace('t."createdAt", GREATEST', 't."createdAt", NULL::text, GREATEST'),
    );
    const drift = await functionDrift(functionSources(dir));
    expect(drift.changed.map((s) => s.name).sort()).toEqual([
      "mnemo_searchable_threads",
      "mnemo_usage_today",
      "mnemo_user_tag",
    ]);
    expect(drift.stale).toEqual(["mnemo_user_tag(uid text)"]);
    expect(drift.retyped).toEqual(["mnemo_searchable_threads(text,text,timestamp without time zone,text,boolean)"]);
    const sql = driftMigration(drift);
    expect(sql).toContain("DROP FUNCTION mnemo_user_tag(uid text);");
    expect(sql).toContain("-- changed");
    // The DROP comes before the new definition.
    const drop = sql.indexOf(`DROP FUNCTION ${drift.retyped[0]};`);
    expect(drop).toBeGreaterThan(-1);
    expect(drop).toBeLessThan(sql.indexOf("CREATE OR REPLACE FUNCTION mnemo_searchable_threads"));
    fs.rmSync(dir, { recursive: true });
  });
});
