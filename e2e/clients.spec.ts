// What outside clients meet over real HTTP on the production build: the openai SDK's embeddings from the built-in
// encoder (base64, the SDK's default), JSON errors for paths Mnemo does not serve, and what an MCP client reads before
// any OAuth (a bearer challenge with the reason, JSON 404 for the OAuth metadata, 405 for GET /mcp).
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
});
