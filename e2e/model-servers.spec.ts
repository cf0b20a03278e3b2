// Servers differ behind "OpenAI-compatible": a reasoning model served by Ollama or vLLM opens its reply with a
// <think> block, and LM Studio refuses JSON mode. The chat shows the answer, not the thinking; learning still works.
import { expect, test, type Page } from "@playwright/test";
import {
  adminEmail,
  mockRequests,
  mockUrl,
  register,
  scriptReplies,
  send,
  signInOk,
  uniqueEmail,
  type MockRequest,
} from "./helpers";

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

test("a server that cuts a long chat's prompt (Ollama's default): the answer says so, until the admin saves settings", async ({
  page,
  browser,
}) => {
  test.setTimeout(90_000);
  await register(page, uniqueEmail("cut"));
  const tag = `c${Date.now()}`;
  const part = (i: number) => `Part ${i} of my notes ${tag}: ${"we walked along the river and ".repeat(80).trim()}`;
  // Each answer complete before the next message (send's wait can see the previous answer as the last one).
  const say = async (i: number) => {
    await send(page, part(i));
    await expect(answers(page)).toHaveCount(i + 1);
    await expect(answers(page).last()).toHaveAttribute("data-status", "complete");
  };
  // How long a chat request is as the mock server counts it (a quarter of its characters, tools included).
  const size = (r: MockRequest) =>
    Math.ceil(
      (r.body.messages.reduce((n, m) => n + String(m.content ?? "").length, 0) +
        JSON.stringify((r.body as { tools?: unknown }).tools ?? "").length) /
        4,
    );
  const askedWith = async (text: string) =>
    (await mockRequests()).filter((r) => r.body.model === "mock-chat" && r.body.messages.at(-1)?.content === text);
  await fetch(`${mockUrl()}/__mock/replies`, {
    method: "POST",
    body: JSON.stringify({ contextLength: 1500, overflow: "ollama-shift" }),
  });
  try {
    for (let i = 0; i < 3; i++) await say(i);
    // The second turn was cut by the server: its answer says so; the third was sent within what the server reads.
    const warning = page.getByTestId("answer-warning");
    await expect(warning).toHaveCount(1);
    await expect(warning).toContainText(/^The model server read only [\d,]+ of about [\d,]+ tokens Mnemo sent/);
    await expect(answers(page).nth(1).getByTestId("answer-warning")).toBeVisible();
    const third = await askedWith(part(2));
    expect(third).toHaveLength(1);
    expect(size(third[0])).toBeLessThanOrEqual(1500);
    await warning.scrollIntoViewIfNeeded();
    await page.screenshot({ path: "test-results/prompt-cut-warning.png" });
    await page.reload();
    await expect(page.getByTestId("answer-warning")).toHaveCount(1);
  } finally {
    await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ contextLength: 0 }) });
    // The admin saves the model settings (say, after giving the model a longer context): what was learned about
    // the server is forgotten, and the next turn is sent whole.
    const ctx = await browser.newContext();
    const admin = await ctx.newPage();
    await signInOk(admin, adminEmail());
    await admin.goto("/admin/settings");
    await admin.getByRole("button", { name: "Save", exact: true }).click();
    await expect(admin.getByText("Saved.")).toBeVisible();
    await ctx.close();
  }
  await say(3);
  const fourth = await askedWith(part(3));
  expect(fourth).toHaveLength(1);
  expect(size(fourth[0])).toBeGreaterThan(1500);
  await expect(page.getByTestId("answer-warning")).toHaveCount(1);
});
