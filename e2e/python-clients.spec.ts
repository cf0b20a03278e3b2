// Mnemo through the Python `openai` and `mcp` packages (tests/python/clients.py), over real HTTP on the production
// build. CI installs them (.ci/run); elsewhere the test is skipped when they are missing.
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { register, uniqueEmail } from "./helpers";

const pythonReady = (() => {
  try {
    execFileSync("python3", ["-c", "import openai, mcp"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

test("the Python openai and mcp packages: chat, responses, conversations, embeddings, MCP tools, errors", async ({
  page,
  baseURL,
}) => {
  test.skip(!pythonReady && !process.env.CI, "python3 with openai and mcp is not installed (CI installs them)");
  test.setTimeout(120_000);
  await register(page, uniqueEmail("python"));
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("python");
  await page.getByLabel(/^memory:read/).check();
  await page.getByLabel(/^memory:write/).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").textContent())!.trim();
  const run = await promisify(execFile)("python3", ["tests/python/clients.py"], {
    env: { ...process.env, MNEMO_URL: baseURL!, MNEMO_KEY: key },
    timeout: 90_000,
  }).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? "", stderr: e.stderr ?? String(e) }));
  expect(run.stdout + run.stderr).toContain("0 failed");
});
