// The model server goes away mid-session: the chat says within 2 s that it could not be reached and where (the admin
// also reads the next step), keeps the question, and Retry works once the server is back. A stream the model server
// cuts through /v1 is kept as interrupted, never complete.
import OpenAI from "openai";
import { expect, test, type Page } from "@playwright/test";
import { startMockLlm, type MockLlm } from "../testing/mock-llm";
import { adminEmail, register, scriptReplies, send, signInOk, uniqueEmail } from "./helpers";

const answers = (page: Page) => page.getByTestId("message-assistant");

/** Saves the Base URL on the admin page ("": back to the environment's, the shared test server). */
async function useModelServer(page: Page, baseUrl: string) {
  await page.goto("/admin/settings");
  await page.getByLabel("Base URL").fill(baseUrl);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved.", { exact: true })).toBeVisible();
}

test("the model server stops mid-session: the chat says so within 2 s, and Retry works once it is back", async ({
  page,
}) => {
  test.setTimeout(90_000);
  let own: MockLlm | null = await startMockLlm();
  const port = Number(new URL(own.url).port);
  const where = `127.0.0.1:${port}`;
  await signInOk(page, adminEmail());
  try {
    await useModelServer(page, own.url);
    await page.goto("/");
    await send(page, "First question, while the server runs");
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");

    await own.close();
    own = null;
    const asked = Date.now();
    await send(page, "Second question, with the server gone");
    const failed = answers(page).nth(1);
    await expect(failed.getByRole("alert")).toContainText(`could not reach the model server at ${where}`, {
      timeout: 2_000,
    });
    const tookMs = Date.now() - asked;
    expect(tookMs, "the failure is shown within 2 s").toBeLessThan(2_000);
    await expect(failed.getByRole("alert")).toContainText("Admin → Model settings");
    await expect(failed).toHaveAttribute("data-status", "failed");
    await expect(page.getByTestId("message-user").nth(1)).toContainText("Second question, with the server gone");
    await page.screenshot({ path: "test-results/model-down.png" });

    own = await startMockLlm(port);
    await failed.getByRole("button", { name: "Retry" }).click();
    await expect(answers(page).nth(1)).toHaveAttribute("data-status", "complete");
    await expect(answers(page).nth(1)).toContainText("Second question, with the server gone");
  } finally {
    await own?.close();
    await useModelServer(page, "");
  }
});

test("a stream the model server cuts: what came stays, marked interrupted; a user reads no admin step", async ({
  page,
}) => {
  await register(page, uniqueEmail("down-user"));
  // Chunks spaced out, so the first ones have arrived when the server drops the connection.
  await scriptReplies([
    { match: "cut me off", content: "one two three four five six seven", dropAfterChunks: 3, chunkDelayMs: 50 },
  ]);
  await page.getByLabel("Message", { exact: true }).fill("please cut me off");
  await page.keyboard.press("Enter");
  const answer = answers(page).first();
  await expect(answer.getByRole("alert")).toContainText(/cut the connection before the answer was complete/);
  await expect(answer.getByRole("alert")).not.toContainText("Admin → Model settings");
  await expect(answer).toHaveAttribute("data-status", "interrupted");
  await expect(answer).toContainText("one two");
});

test("a stream cut through /v1: the client gets the model server's error, the thread keeps the part as interrupted", async ({
  page,
  baseURL,
}) => {
  await register(page, uniqueEmail("v1-cut"));
  await page.goto("/settings/keys");
  await page.getByLabel("Name", { exact: true }).fill("script");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key-value").textContent())!.trim();
  const tag = `cut${Date.now()}`;
  await scriptReplies([
    { match: tag, content: "alpha beta gamma delta epsilon zeta eta", dropAfterChunks: 3, chunkDelayMs: 50 },
  ]);

  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: key, maxRetries: 0 });
  let got = "";
  const failure = await (async () => {
    const stream = await client.chat.completions.create({
      model: "mnemo",
      stream: true,
      messages: [{ role: "user", content: `Tell me a story ${tag}` }],
    });
    for await (const chunk of stream) got += chunk.choices[0]?.delta?.content ?? "";
  })().then(
    () => null,
    (e: Error) => e,
  );
  expect(failure?.message ?? "").toMatch(/model server at [\w.]+:\d+ cut the connection/);
  expect(got).toContain("alpha");

  await page.goto("/");
  await page.getByTestId("thread-list").getByText("via script").first().click();
  const answer = answers(page).first();
  await expect(answer).toHaveAttribute("data-status", "interrupted");
  await expect(answer).toContainText("alpha");
  await page.screenshot({ path: "test-results/v1-cut-interrupted.png" });
});
