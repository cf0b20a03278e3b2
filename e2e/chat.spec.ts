import { expect, test, type Page } from "@playwright/test";
import { mockUrl, register, uniqueEmail } from "./helpers";

type Recorded = { id: number; path: string; body: { messages: { role: string; content: string }[] } };

async function script(replies: object[]) {
  await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ replies }) });
}
async function chatRequests(containing: string): Promise<Recorded[]> {
  const r = await (await fetch(`${mockUrl()}/__mock/requests`)).json();
  return (r.requests as Recorded[]).filter(
    (q) =>
      q.path === "/v1/chat/completions" &&
      JSON.stringify(q.body.messages).includes(containing) &&
      !JSON.stringify(q.body.messages).includes("Give this conversation a title"),
  );
}
async function send(page: Page, text: string) {
  await page.getByLabel("Message", { exact: true }).fill(text);
  await page.keyboard.press("Enter");
}
const answers = (page: Page) => page.getByTestId("message-assistant");

test.describe("chat", () => {
  test("multi-turn: the second request carries the first turn; undo; reload keeps history", async ({ page }) => {
    await register(page, uniqueEmail("chat"));
    const tag = `m${Date.now()}`;
    await script([{ match: `${tag} first`, content: `Answer one ${tag}` }]);
    await send(page, `${tag} first question`);
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    await expect(answers(page).first()).toContainText(`Answer one ${tag}`);
    await expect(page).toHaveURL(/\/c\/[\w-]+$/);
    await send(page, `${tag} second question`);
    await expect(answers(page).nth(1)).toHaveAttribute("data-status", "complete");

    const second = (await chatRequests(`${tag} second question`))[0];
    const roles = second.body.messages.map((m) => `${m.role}:${m.content}`);
    expect(roles).toContain(`user:${tag} first question`);
    expect(roles).toContain(`assistant:Answer one ${tag}`);
    expect(roles.at(-1)).toBe(`user:${tag} second question`);

    await page.reload();
    await expect(page.getByTestId("message-user")).toHaveCount(2);
    await expect(page.getByTestId("thread-totals")).toContainText("tokens used");

    await page.getByRole("button", { name: "Undo last turn" }).click();
    await expect(page.getByTestId("message-user")).toHaveCount(1);
    await expect(answers(page)).toHaveCount(1);
    await page.reload();
    await expect(page.getByTestId("message-user")).toHaveCount(1);
    // The thread is in the sidebar.
    await expect(page.getByTestId("thread-list").getByRole("link")).toHaveCount(1);
  });

  test("edit a past message: a new branch, the old one kept and switchable", async ({ page }) => {
    await register(page, uniqueEmail("branch"));
    const tag = `b${Date.now()}`;
    await send(page, `${tag} original`);
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    await page.getByTestId("message-user").first().getByRole("button", { name: "Edit message" }).click();
    await page.getByRole("textbox", { name: "Edit message" }).fill(`${tag} edited`);
    await page.getByRole("button", { name: "Save & send" }).click();
    await expect(answers(page).first()).toContainText(`Mock answer to: ${tag} edited`);
    const user = page.getByTestId("message-user").first();
    await expect(user.getByTestId("branch-switcher")).toContainText("2/2");
    await user.getByRole("button", { name: "Previous version" }).click();
    await expect(user).toContainText(`${tag} original`);
    await expect(user.getByTestId("branch-switcher")).toContainText("1/2");
    await expect(answers(page).first()).toContainText(`Mock answer to: ${tag} original`);
    // The next turn continues the branch that is shown.
    await send(page, `${tag} follow-up`);
    await expect(answers(page).nth(1)).toHaveAttribute("data-status", "complete");
    const req = (await chatRequests(`${tag} follow-up`))[0];
    const text = JSON.stringify(req.body.messages);
    expect(text).toContain(`${tag} original`);
    expect(text).not.toContain(`${tag} edited`);
  });

  test("stop keeps the partial answer, marked stopped", async ({ page }) => {
    await register(page, uniqueEmail("stop"));
    const tag = `s${Date.now()}`;
    await script([
      { match: tag, content: Array.from({ length: 200 }, (_, i) => `word${i}`).join(" "), chunkDelayMs: 40 },
    ]);
    await send(page, `${tag} tell me a long story`);
    await expect(answers(page).first()).toContainText("word5");
    await page.keyboard.press("Escape");
    await expect(answers(page).first()).toHaveAttribute("data-status", "stopped");
    await expect(answers(page).first()).toContainText("Stopped.");
    await page.reload();
    await expect(answers(page).first()).toHaveAttribute("data-status", "stopped");
    await expect(answers(page).first()).toContainText("word5");
    await expect(answers(page).first()).not.toContainText("word199");
  });

  test("model 500: the question stays, the answer shows the error, Retry succeeds", async ({ page }) => {
    await register(page, uniqueEmail("fail"));
    const tag = `f${Date.now()}`;
    await script([{ match: tag, status: 500 }]);
    await send(page, `${tag} question`);
    const answer = answers(page).first();
    await expect(answer).toHaveAttribute("data-status", "failed");
    await expect(answer.getByRole("alert")).toContainText(/The model server at [\w.]+:\d+ failed \(500\)/);
    await expect(page.getByTestId("message-user").first()).toContainText(`${tag} question`);
    await answer.getByRole("button", { name: "Retry" }).click();
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    await expect(answers(page)).toHaveCount(1);
    await expect(answers(page).first()).toContainText(`Mock answer to: ${tag} question`);
  });

  test("reload during an answer shows the same history, then the finished answer", async ({ page }) => {
    await register(page, uniqueEmail("reload"));
    const tag = `r${Date.now()}`;
    await script([
      { match: tag, content: Array.from({ length: 60 }, (_, i) => `part${i}`).join(" "), chunkDelayMs: 50 },
    ]);
    await send(page, `${tag} slow one`);
    await expect(answers(page).first()).toContainText("part20");
    await page.reload();
    await expect(page.getByTestId("message-user").first()).toContainText(`${tag} slow one`);
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete", { timeout: 15_000 });
    await expect(answers(page).first()).toContainText("part59");
  });

  test("a refresh of a new chat keeps what is typed; New chat after a first message opens an empty one", async ({
    page,
  }) => {
    // A server action that a navigation overtook refreshes the page it lands on (Next's router): here by hand.
    await register(page, uniqueEmail("refresh"));
    const tag = `f${Date.now()}`;
    const refresh = async () => {
      const done = page.waitForResponse((r) => r.request().headers()["rsc"] === "1" && r.url().includes("_rsc="));
      await page.evaluate(() => (window as unknown as { next: { router: { refresh(): void } } }).next.router.refresh());
      await done;
    };
    await page.getByLabel("Message", { exact: true }).fill(`${tag} half a thought`);
    await refresh();
    await expect(page.getByLabel("Message", { exact: true })).toHaveValue(`${tag} half a thought`);
    await script([{ match: tag, content: `Answer ${tag}` }]);
    await page.keyboard.press("Enter");
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    await refresh();
    await expect(answers(page).first()).toContainText(`Answer ${tag}`);
    await page.getByRole("link", { name: "New chat" }).click();
    await expect(page).toHaveURL(/\/$/);
    await expect(answers(page)).toHaveCount(0);
    await expect(page.getByLabel("Message", { exact: true })).toHaveValue("");
  });

  test("bad input: empty refused, over-long explained; another user's thread is not found", async ({
    page,
    browser,
  }) => {
    await register(page, uniqueEmail("owner"));
    await page.getByLabel("Message", { exact: true }).fill("   ");
    await expect(page.getByRole("button", { name: "Send message (Enter)" })).toBeDisabled();
    await page.getByLabel("Message", { exact: true }).fill("x".repeat(20_001));
    await expect(page.getByText(/Messages are limited to 20,000 characters/)).toBeVisible();
    await expect(page.getByRole("button", { name: "Send message (Enter)" })).toBeDisabled();
    // The server refuses it too, with the same message.
    const res = await page.request.post("/api/chat", { data: { kind: "send", content: "   " } });
    expect(res.status()).toBe(400);
    expect((await res.json()).error).toBe("Type a message.");
    // Just past the limit and far past it (refused before it is parsed), the same explanation.
    for (const content of ["x".repeat(20_001), "x ".repeat(200_000)]) {
      const long = await page.request.post("/api/chat", { data: { kind: "send", content } });
      expect([400, 413]).toContain(long.status());
      expect((await long.json()).error).toBe("Messages are limited to 20,000 characters.");
    }

    await send(page, "private thought");
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    const url = page.url();
    const threadId = url.split("/c/")[1];

    const ctx = await browser.newContext();
    const other = await ctx.newPage();
    await register(other, uniqueEmail("intruder"));
    const r = await other.goto(url);
    expect(r?.status()).toBe(404);
    await expect(other.getByText("private thought")).toHaveCount(0);
    const api = await other.request.post("/api/chat", { data: { kind: "send", threadId, content: "hi" } });
    expect(api.status()).toBe(404);
    expect(await api.json()).toEqual({ error: "Thread not found." });
    await ctx.close();
  });
});

test.describe("the user's date", () => {
  // A zone far from the server's UTC: on another date than UTC for half of every day.
  test.use({ timezoneId: "Pacific/Kiritimati" });
  test("the model is told today's date in the browser's time zone", async ({ page }) => {
    await register(page, uniqueEmail("today"));
    const tag = `d${Date.now()}`;
    await send(page, `${tag} what is the date?`);
    await expect(answers(page).first()).toHaveAttribute("data-status", "complete");
    const day = new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeZone: "Pacific/Kiritimati" }).format(
      new Date(),
    );
    const system = (await chatRequests(`${tag} what is the date?`))[0].body.messages[0].content;
    expect(system).toContain(`Today is ${day} (the user's time zone: Pacific/Kiritimati).`);
  });
});
