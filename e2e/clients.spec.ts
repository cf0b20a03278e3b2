// What outside clients meet over real HTTP on the production build: the openai SDK's embeddings from the built-in
// encoder (base64, the SDK's default), JSON errors for paths Mnemo does not serve, and what an MCP client reads before
// any OAuth (a bearer challenge with the reason, JSON 404 for the OAuth metadata, 405 for GET /mcp).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { expect, test } from "@playwright/test";
import { register, uniqueEmail } from "./helpers";

test("outside clients get JSON they can read, and embeddings from the built-in encoder", async ({ page, baseURL }) => {
  await register(page, uniqueEmail("clients"));
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("rag");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").textContent())!.trim();
  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: key, maxRetries: 0 });

  const e = await client.embeddings.create({ model: "anything", input: ["Has a golden retriever", "Owns a dog"] });
  expect(e.model).toBe("builtin/universal-sentence-encoder-lite");
  expect(e.data).toHaveLength(2);
  expect(e.data[0].embedding).toHaveLength(512);
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);
  expect(cos(e.data[0].embedding, e.data[1].embedding)).toBeGreaterThan(0.5);

  await expect(client.completions.create({ model: "x", prompt: "hi" })).rejects.toMatchObject({ status: 404 });
  const missing = await fetch(`${baseURL}/v1/responses/nothing`, { headers: { authorization: `Bearer ${key}` } });
  expect(missing.headers.get("content-type")).toContain("application/json");

  const meta = await fetch(`${baseURL}/.well-known/oauth-protected-resource/mcp`, { redirect: "manual" });
  expect(meta.status).toBe(404);
  expect((await meta.json()).error_description).toMatch(/API key/);
  const challenge = await fetch(`${baseURL}/mcp`, {
    method: "POST",
    headers: {
      authorization: "Bearer mnemo_not-a-key",
      "content-type": "application/json",
      accept: "application/json",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
  });
  expect(challenge.status).toBe(401);
  expect(challenge.headers.get("www-authenticate")).toMatch(/^Bearer /);
  expect((await challenge.json()).error_description).toBe("This API key is not valid.");
  const events = await fetch(`${baseURL}/mcp`, { headers: { authorization: `Bearer ${key}` } });
  expect(events.status).toBe(405);

  // The Responses API, then compaction: the thread "via rag" shows the summary after the answer it covers.
  const first = await client.responses.create({ model: "mnemo", input: "We are planning a garden in Porto" });
  expect(first.output_text).toContain("planning a garden");
  const compacted = await client.responses.compact({ model: "gpt-4o-mini", previous_response_id: first.id });
  expect(compacted.output.map((o) => o.type)).toEqual(["message", "compaction"]);
  await page.goto("/");
  await page.getByTestId("thread-list").getByText("via rag").first().click();
  const summary = page.getByTestId("thread-summary");
  await expect(summary).toBeVisible();
  await summary.locator("summary").click();
  await page.screenshot({ path: "test-results/thread-summary.png" });
});

/** mcp-remote (the bridge Claude Desktop and Cursor use), given these JSON-RPC lines; its output once it answers. */
async function mcpRemote(url: string, authHeader: string, lines: object[], until: (out: string) => boolean) {
  const child = spawn(
    process.execPath,
    [
      "node_modules/mcp-remote/dist/proxy.js",
      url,
      "--transport",
      "http-only",
      "--header",
      "Authorization:${AUTH_HEADER}",
    ],
    {
      env: {
        ...process.env,
        AUTH_HEADER: authHeader,
        MCP_REMOTE_CONFIG_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "mcpr-")),
      },
    },
  );
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  for (const l of lines) child.stdin.write(`${JSON.stringify(l)}\n`);
  const started = Date.now();
  while (!until(out) && Date.now() - started < 20_000 && child.exitCode === null)
    await new Promise((r) => setTimeout(r, 100));
  child.kill();
  return out;
}

test("mcp-remote with the Windows-safe header: a good key lists the tools, a bad one says to use a key", async ({
  page,
  baseURL,
}) => {
  test.setTimeout(90_000);
  await register(page, uniqueEmail("bridge"));
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("desktop");
  await page.getByLabel(/^memory:read/).check();
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").textContent())!.trim();
  const hello = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
  ];
  const good = await mcpRemote(`${baseURL}/mcp`, `Bearer ${key}`, hello, (o) => o.includes('"id":2'));
  expect(good).toContain("search_memory");
  const bad = await mcpRemote(`${baseURL}/mcp`, "Bearer mnemo_revoked", hello, (o) => o.includes("API key"));
  expect(bad).toContain("personal API keys, not OAuth");
  expect(bad).not.toContain("Unexpected token '<'");
});
