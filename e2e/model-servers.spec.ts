// Servers differ behind "OpenAI-compatible": a reasoning model served by Ollama or vLLM opens its reply with a
// <think> block, and LM Studio refuses JSON mode. The chat shows the answer, not the thinking; learning still works.
import { expect, test, type Page } from "@playwright/test";
import { mockRequests, mockUrl, register, scriptReplies, send, uniqueEmail } from "./helpers";

const answers = (page: Page) => page.getByTestId("message-assistant");

test("a reasoning model: the chat shows its answer without its thinking, before and after a reload", async ({
  page,
}) => {
  await register(page, uniqueEmail("think"));
  const tag = `t${Date.now()}`;
  await scriptReplies([
    {
      match: tag,
      content: `<think>\nThe user asks about ${tag}. Plan: greet, then answer briefly.\n</think>\n\nHere is **the answer** about ${tag}.`,
      chunkDelayMs: 20,
    },
  ]);
  await send(page, `Tell me about ${tag}`);
  await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
  await expect(answers(page).first()).toContainText(`Here is the answer about ${tag}.`);
  await expect(answers(page).first()).not.toContainText("Plan: greet");
  await expect(answers(page).first()).not.toContainText("think");
  await page.screenshot({ path: "test-results/reasoning-model-answer.png" });
  await page.reload();
  await expect(answers(page).first()).toContainText(`Here is the answer about ${tag}.`);
  await expect(answers(page).first()).not.toContainText("Plan: greet");
});

test("a reasoning model that stops while still thinking: a sentence and Retry, not an empty answer", async ({
  page,
}) => {
  await register(page, uniqueEmail("thinking-cut"));
  const tag = `c${Date.now()}`;
  await scriptReplies([{ match: tag, content: "<think>\nLet me weigh every option", finishReason: "length" }]);
  await send(page, `Riddle ${tag}`);
  const answer = answers(page).first();
  await expect(answer).toHaveAttribute("data-status", "failed");
  await expect(answer.getByRole("alert")).toContainText("still thinking when it stopped");
  await expect(answer.getByRole("button", { name: "Retry" })).toBeVisible();
  await page.screenshot({ path: "test-results/reasoning-model-cut-off.png" });
});

test("a server that refuses JSON mode (as LM Studio does): Mnemo still learns from the chat", async ({ page }) => {
  await register(page, uniqueEmail("lmstudio"));
  const tag = `l${Date.now()}`;
  await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ refuseJsonMode: true }) });
  try {
    await scriptReplies([
      {
        match: `Latest exchange:\nUser: I adopted a cat named Miso ${tag}`,
        json: { decisions: [{ op: "ADD", text: `Has a cat named Miso ${tag}`, kind: "fact" }] },
      },
    ]);
    await send(page, `I adopted a cat named Miso ${tag}`);
    await expect(async () => {
      await page.goto("/settings/memory");
      await expect(page.getByText(`Has a cat named Miso ${tag}`)).toBeVisible({ timeout: 1000 });
    }).toPass({ timeout: 20_000 });
    const extraction = (await mockRequests()).filter((r) =>
      JSON.stringify(r.body).includes(`User: I adopted a cat named Miso ${tag}`),
    );
    // Asked at most once in JSON mode (refused), then without it.
    expect(extraction.at(-1)?.body).not.toHaveProperty("response_format");
  } finally {
    await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ refuseJsonMode: false }) });
  }
});

test("a model its server runs without tool calling (as Ollama does for many): the chat still answers", async ({
  page,
}) => {
  await register(page, uniqueEmail("notools"));
  const tag = `n${Date.now()}`;
  await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ refuseTools: true }) });
  try {
    await send(page, `Hello ${tag}`);
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    await expect(answers(page).first()).toContainText(`Mock answer to: Hello ${tag}`);
  } finally {
    await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ refuseTools: false }) });
  }
});
