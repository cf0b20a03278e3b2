// `npm test`: unit/integration tests (vitest; PGlite always, PostgreSQL too when
// TEST_DATABASE_URL is set), then the browser tests (Playwright in Chromium)
// against the production build, which is built first if the sources changed.
// Ends with one line: "test: N passed, N failed".
import fs from "node:fs";
import { spawnSync } from "node:child_process";
import { buildIfStale } from "./build-state";

fs.mkdirSync(".tmp", { recursive: true });
const only = process.argv[2]; // "unit" | "e2e" | undefined (both)
let passed = 0;
let failed = 0;
let ok = true;

function node(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } }).status === 0;
}

if (only !== "e2e") {
  console.log(`\n== unit and integration tests (PGlite${process.env.TEST_DATABASE_URL ? " and PostgreSQL" : ""})`);
  ok =
    node([
      "node_modules/vitest/vitest.mjs",
      "run",
      "--reporter=default",
      "--reporter=json",
      "--outputFile.json=.tmp/vitest.json",
    ]) && ok;
  try {
    const r = JSON.parse(fs.readFileSync(".tmp/vitest.json", "utf8"));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
  } catch {
    failed++;
  }
}

if (only !== "unit") {
  buildIfStale();
  console.log(
    `\n== browser tests (Chromium, production build, ${process.env.TEST_DATABASE_URL ? "PostgreSQL" : "PGlite"})`,
  );
  ok =
    node(["node_modules/@playwright/test/cli.js", "test", "--reporter=list,json"], {
      PLAYWRIGHT_JSON_OUTPUT_NAME: ".tmp/playwright.json",
    }) && ok;
  try {
    const r = JSON.parse(fs.readFileSync(".tmp/playwright.json", "utf8"));
    passed += r.stats.expected;
    failed += r.stats.unexpected + (r.stats.flaky ?? 0);
  } catch {
    failed++;
  }
}

fs.writeFileSync(".tmp/test-summary.json", JSON.stringify({ passed, failed }));
console.log(`test: ${passed} passed, ${failed} failed`);
process.exit(ok && failed === 0 ? 0 : 1);
