// Importing history from another chat app, in the browser on the production
// build: a ChatGPT export becomes threads with their dates and branches, a fact
// from it is recalled in a new chat, and "learn from them" fills the review queue.
import fs from "node:fs";
import path from "node:path";
import { strToU8, zipSync } from "fflate";
import { expect, test } from "@playwright/test";
import { mockUrl, register, uniqueEmail } from "./helpers";

const CHATGPT = path.resolve("tests/fixtures/import/chatgpt-conversations.json");
type Recorded = { path: string; body: { model: string; messages: { role: string; content: string }[] } };

async function script(replies: object[]) {
  await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ replies }) });
}

test("a ChatGPT export: threads with original dates and branches, recalled in a new chat, learned into the review queue", async ({
  page,
}) => {
  test.setTimeout(120_000);
  await register(page, uniqueEmail("importer"));
  await page.goto("/settings/data");
  const file = page.getByLabel("Conversations file to import");
  await file.setInputFiles(CHATGPT);
  const result = page.getByTestId("import-result");
  await expect(result).toContainText("Imported 1 conversation (8 messages, 1 edited branch) from ChatGPT.");
  await expect(result).toContainText("1 skipped: empty conversation (no messages).");
  await expect(page.getByTestId("import-learn")).toContainText(
    "2 exchanges from 1 imported conversation: 2 model calls",
  );
  await page.screenshot({ path: "test-results/import-done.png", fullPage: true });
  // The same export as the zip ChatGPT sends (conversations.json inside, among other files): nothing new.
  const zip = zipSync({
    "chat.html": strToU8("<html></html>"),
    "conversations.json": new Uint8Array(fs.readFileSync(CHATGPT)),
  });
  await file.setInputFiles({ name: "chatgpt-export.zip", mimeType: "application/zip", buffer: Buffer.from(zip) });
  await expect(result).toContainText(
    "Imported 0 conversations (0 messages) from ChatGPT. 1 conversation was already imported and is left as it was.",
  );

  // The thread, with where it came from, its dates and the edited question's other version.
  await page.getByTestId("thread-list").getByRole("link", { name: "Trip to Lisbon" }).click();
  await expect(page.getByTestId("thread-origin")).toHaveText("imported from ChatGPT · started 1 Mar 2024");
  await expect(page.getByTestId("day-separator").first()).toHaveText("1 Mar 2024");
  await expect(page.getByText("Try pet-friendly chains")).toBeVisible();
  const versions = page.getByTestId("branch-switcher");
  await expect(versions).toContainText("2/2");
  await versions.getByRole("button", { name: "Previous version" }).click();
  await expect(page.getByText("Which hotels allow dogs?")).toBeVisible();
  await expect(page.getByText("Many hotels in Alfama")).toBeVisible();
  await page.screenshot({ path: "test-results/import-thread.png", fullPage: true });

  // A new chat recalls the imported fact, dated.
  const question = `What does my golden retriever need for the flight? ${Date.now()}`;
  await page.getByRole("link", { name: "New chat" }).click();
  await page.getByLabel("Message", { exact: true }).fill(question);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");
  const requests = (await (await fetch(`${mockUrl()}/__mock/requests`)).json()).requests as Recorded[];
  const sent = requests.find((r) => r.body.model === "mock-chat" && r.body.messages.at(-1)?.content === question);
  const system = sent?.body.messages.find((m) => m.role === "system")?.content ?? "";
  const block = /<user_memory>[\s\S]*<\/user_memory>/.exec(system)?.[0] ?? "";
  expect(block).toContain("golden retriever Max in March");
  expect(block).toContain("2024-03-01");

  // Learning from it: the scripted extraction lands in the review queue.
  await script([
    {
      match: "retriever Max in March",
      json: { decisions: [{ op: "ADD", text: "Has a golden retriever named Max", kind: "fact" }] },
    },
  ]);
  await page.goto("/settings/data");
  await page.getByRole("button", { name: "Learn from them" }).click();
  await expect(page.getByTestId("import-learn")).toContainText("Done: Mnemo read all 2 exchanges", { timeout: 30_000 });
  await page.getByTestId("import-learn").getByRole("link", { name: "review queue" }).click();
  await expect(page.getByText("Has a golden retriever named Max")).toBeVisible();
  await expect(page.getByText("waiting for review").first()).toBeVisible();
  // Dated from when it was said in the imported chat, not from the day of the import.
  await expect(page.getByTestId("memory-validity").first()).toHaveText("true since March 2024");
  await page.screenshot({ path: "test-results/import-review.png", fullPage: true });

  // Approved, it goes to the model under the day it became true when a question asks when.
  await page.getByRole("button", { name: "Approve" }).first().click();
  await expect(page.getByText("Approved.")).toBeVisible();
  const when = `How long have I had my dog? ${Date.now()}`;
  await page.goto("/");
  await page.getByLabel("Message", { exact: true }).fill(when);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");
  const later = (await (await fetch(`${mockUrl()}/__mock/requests`)).json()).requests as Recorded[];
  const asked = later.find((r) => r.body.model === "mock-chat" && r.body.messages.at(-1)?.content === when);
  const dated = asked?.body.messages.find((m) => m.role === "system")?.content ?? "";
  expect(dated).toMatch(/\n2024-03-\d\d:\n- Has a golden retriever named Max/);
});

test("a pasted memory list waits in the review queue; a file that is not an export is refused with a clear error", async ({
  page,
}) => {
  test.setTimeout(60_000);
  const tag = `kestrel${Date.now()}`;
  await register(page, uniqueEmail("paster"));
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto("/settings/data");
  await page
    .getByLabel("Paste another assistant's memory list")
    .fill(`- Watches the ${tag}\n- Prefers short answers\n`);
  await page.getByRole("button", { name: "Add to review queue" }).click();
  await expect(page.getByRole("status").filter({ hasText: "2 added to your review queue" })).toBeVisible();
  await page
    .getByLabel("Conversations file to import")
    .setInputFiles({ name: "notes.json", mimeType: "application/json", buffer: Buffer.from("hello") });
  await expect(page.getByRole("alert").filter({ hasText: "not a conversation export" })).toBeVisible();
  await page.getByRole("heading", { name: "Import conversations" }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: "test-results/import-phone.png" });
  await page.goto("/settings/memory?status=pending");
  await expect(page.getByText(`Watches the ${tag}`)).toBeVisible();
});

test("a pasted document of 400,000 characters comes in whole: its start shows at once, the whole on request", async ({
  page,
}) => {
  test.setTimeout(90_000);
  await register(page, uniqueEmail("longdoc"));
  const clause = (i: number) => `Clause ${i} of the lease sets out what the tenant owes each month.`;
  const doc = Array.from({ length: 7000 }, (_, i) => clause(i)).join("\n\n") + "\n\nThe last clause names the pelican.";
  const answer = `**Summary.** ${"The lease is long but ordinary. ".repeat(300)}`;
  const file = JSON.stringify([
    {
      uuid: "lease-1",
      name: `Lease ${Date.now()}`,
      created_at: "2024-05-02T09:15:00Z",
      chat_messages: [
        { uuid: "q", sender: "human", text: doc, created_at: "2024-05-02T09:15:00Z" },
        { uuid: "a", sender: "assistant", text: answer, created_at: "2024-05-02T09:16:00Z" },
      ],
    },
  ]);
  await page.goto("/settings/data");
  await page
    .getByLabel("Conversations file to import")
    .setInputFiles({ name: "conversations.json", mimeType: "application/json", buffer: Buffer.from(file) });
  await expect(page.getByTestId("import-result")).toContainText("Imported 1 conversation (2 messages)");
  await page.getByTestId("thread-list").getByRole("link", { name: /Lease/ }).click();
  const user = page.getByTestId("message-user");
  await expect(user).toContainText("Clause 0 of the lease");
  await expect(user.getByTestId("long-text")).toHaveAttribute("data-whole", "false");
  await expect(user).not.toContainText("names the pelican");
  await page.screenshot({ path: "test-results/import-long-message.png" });
  await user.getByRole("button", { name: /Show the whole message \(4\d\d,\d{3} characters/ }).click();
  await expect(user).toContainText("The last clause names the pelican.");
  await user.getByRole("button", { name: "Show less" }).click();
  await expect(user).not.toContainText("names the pelican");
  // An answer under the limit renders whole, as Markdown.
  const answered = page.getByTestId("message-assistant");
  await expect(answered.locator("strong")).toHaveText("Summary.");
  await expect(answered.getByTestId("long-text")).toHaveCount(0);
});
