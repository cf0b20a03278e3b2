// End-to-end tests in real Chromium against the production build (`next start`),
// with the project's mock LLM server, on a fresh embedded database (or a fresh
// PostgreSQL database when TEST_DATABASE_URL is set). See e2e/serve.ts.
import fs from "node:fs";
import { defineConfig } from "@playwright/test";

const PORT = Number(process.env.E2E_PORT ?? 3100);
const chromium = process.env.CHROMIUM_PATH ?? (fs.existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined);

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: process.env.CI ? [["list"]] : [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    // Dates follow the browser's locale and time zone (components/ui/local-date.tsx): fixed, so tests can read them.
    locale: "en-GB",
    timezoneId: "UTC",
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: chromium,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [
    // Runs first, on the empty database: the first account becomes admin.
    { name: "accounts", testMatch: /accounts\.spec\.ts/ },
    { name: "app", testIgnore: /accounts\.spec\.ts/, dependencies: ["accounts"] },
  ],
  webServer: {
    command: `npx tsx e2e/serve.ts`,
    url: `http://127.0.0.1:${PORT}/api/health`,
    timeout: 120_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    env: { E2E_PORT: String(PORT) },
  },
});
