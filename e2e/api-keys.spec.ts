import OpenAI from "openai";
import { expect, test } from "@playwright/test";
import { register, uniqueEmail } from "./helpers";

test("an API key: made once on the settings page, used by the openai client, shown on the data page", async ({
  page,
  baseURL,
}) => {
  test.setTimeout(90_000);
  await register(page, uniqueEmail("keys"));
  const tag = Date.now().toString(36);
  await page.goto("/settings/memory");
  await page.getByLabel("New memory").fill(`Allergic to peanuts ${tag}`);
  await page.getByRole("button", { name: "Add" }).click();
  await expect(page.getByTestId("memory")).toHaveCount(1);

  await page.goto("/settings/keys");
  await expect(page.getByRole("heading", { name: "API keys" })).toBeVisible();
  await page.getByLabel("Name", { exact: true }).fill("laptop");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").textContent())!.trim();
  expect(key).toMatch(/^mnemo_/);
  await expect(page.getByTestId("api-key")).toContainText("laptop");
  await page.screenshot({ path: "test-results/api-keys.png", fullPage: true });

  // The real openai client, from outside the browser.
  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: key, maxRetries: 0 });
  const r = await client.chat.completions.create({
    model: "mnemo",
    messages: [{ role: "user", content: `Any snack ideas for me, peanuts ${tag}?` }],
  });
  expect(r.choices[0].message.content).toBeTruthy();

  // The chat is listed as made through the key; the data page says where the memory went.
  await page.goto("/");
  await expect(page.getByTestId("thread-list")).toContainText("via laptop");
  await page.goto("/settings/data");
  // The chat model through the key, and the memory model's extraction afterwards ("learning").
  await expect(page.getByTestId("memory-destination").filter({ hasText: "mock-chat" })).toContainText("key “laptop”");
  await expect(page.getByTestId("memory-sent")).toContainText(`Allergic to peanuts ${tag}`);
  await expect(page.getByTestId("memory-sent")).toContainText("key “laptop”");
  await page.getByTestId("memory-trail").scrollIntoViewIfNeeded();
  await page.screenshot({ path: "test-results/api-keys-trail.png" });

  // Revoked: refused at once.
  await page.goto("/settings/keys");
  page.once("dialog", (d) => void d.accept());
  await page.getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByTestId("api-key")).toContainText("revoked");
  await expect(client.models.list()).rejects.toMatchObject({ status: 401 });
});
