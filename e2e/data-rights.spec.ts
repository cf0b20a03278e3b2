import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { PASSWORD, adminEmail, mockUrl, register, signIn, signInOk, uniqueEmail } from "./helpers";

async function script(replies: object[]) {
  await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ replies }) });
}

async function send(page: Page, text: string) {
  await page.getByLabel("Message", { exact: true }).fill(text);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");
}

test("an admin opens a user's thread with a reason; the user sees the entry", async ({ browser, page }) => {
  test.setTimeout(90_000);
  const email = uniqueEmail("reviewed");
  const tag = `okapi${Date.now()}`;
  await register(page, email);
  await script([{ match: tag, content: `The ${tag} is a forest giraffe.` }]);
  await send(page, `Tell me about the ${tag}`);
  await page.goto("/settings/data");
  await expect(page.getByTestId("audit-empty")).toBeVisible();

  const adminCtx = await browser.newContext();
  const admin = await adminCtx.newPage();
  await signInOk(admin, adminEmail());
  await admin.goto("/admin");
  // No embedding endpoint: the built-in encoder gives the vectors.
  await expect(admin.getByTestId("embedding-backlog")).toContainText(
    "vector from builtin/universal-sentence-encoder-lite",
  );
  await admin.screenshot({ path: "test-results/admin-home.png", fullPage: true });
  await admin.getByLabel("Search users by email or name").fill(email);
  await admin.getByRole("button", { name: "Search" }).click();
  await admin.getByRole("link", { name: `Review ${email}` }).click();
  // Titles and content stay hidden until a reason is given.
  await expect(admin.getByText(tag)).toHaveCount(0);
  await admin
    .getByRole("button", { name: /Open conversation/ })
    .first()
    .click();
  await admin.getByLabel(/Reason for opening this conversation/).fill("Abuse report #42");
  await admin.getByRole("button", { name: "Record reason and open" }).click();
  await expect(admin.getByTestId("review-thread")).toContainText(`The ${tag} is a forest giraffe.`);
  await admin.screenshot({ path: "test-results/admin-review.png", fullPage: true });
  await admin.goto("/admin/audit");
  await expect(admin.getByTestId("audit-table")).toContainText("Abuse report #42");
  await admin.screenshot({ path: "test-results/admin-audit.png", fullPage: true });
  await adminCtx.close();

  await page.reload();
  const entry = page.getByTestId("audit-list").getByRole("listitem").first();
  await expect(entry).toContainText("viewed a conversation of yours");
  await expect(entry).toContainText("because “Abuse report #42”");
  await page.screenshot({ path: "test-results/settings-data.png", fullPage: true });
});

test("a user exports their data and gets every conversation and memory", async ({ page }) => {
  test.setTimeout(90_000);
  const email = uniqueEmail("exporter");
  const tag = `narwhal${Date.now()}`;
  await register(page, email);
  await script([
    { match: tag, content: `Noted about the ${tag}.` },
    {
      // This exchange's learning only: another test's learning still under way must not take this reply.
      match: `Latest exchange:\nUser: I study the ${tag}`,
      json: { decisions: [{ op: "ADD", text: `Studies the ${tag}`, kind: "fact" }] },
    },
  ]);
  await send(page, `I study the ${tag}`);
  // Learning runs after the answer, in the background: the page shows it once it is saved.
  await expect(async () => {
    await page.goto("/settings/memory");
    await expect(page.getByText(`Studies the ${tag}`)).toBeVisible({ timeout: 1000 });
  }).toPass({ timeout: 20_000 });
  await page.goto("/settings/data");
  const downloading = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export my data" }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toMatch(/^mnemo-export-\d{4}-\d{2}-\d{2}\.json$/);
  const file = JSON.parse(fs.readFileSync((await download.path())!, "utf8"));
  expect(file).toMatchObject({ format: "mnemo-export", version: 1, profile: { email } });
  const contents = file.threads.flatMap((t: { items: { content: string }[] }) => t.items.map((i) => i.content));
  expect(contents).toEqual(expect.arrayContaining([`I study the ${tag}`, `Noted about the ${tag}.`]));
  expect(file.memories.map((m: { text: string }) => m.text)).toContain(`Studies the ${tag}`);
  expect(file.memories[0].versions.length).toBeGreaterThan(0);
  await expect(page.getByRole("status").filter({ hasText: "Done: saved" })).toBeVisible();
});

test("a user deletes the account: signed out, cannot sign in, data gone", async ({ browser, page }) => {
  test.setTimeout(90_000);
  const email = uniqueEmail("leaver");
  await register(page, email);
  await script([{ match: "goodbye", content: "Farewell." }]);
  await send(page, "goodbye world");
  await page.goto("/settings/data");
  const del = page.getByRole("button", { name: "Delete my account and all my data" });
  await expect(del).toBeDisabled();
  await page.getByLabel(/to confirm/).fill("delete my account");
  await page.getByLabel("Your password").fill("not my password at all");
  await del.click();
  await expect(page.getByText("That password is not right.")).toBeVisible();
  await page.getByLabel("Your password").fill(PASSWORD);
  await del.click();
  await expect(page).toHaveURL(/\/signin\?deleted=1/);
  await expect(page.getByText("Your account and all its data have been deleted.")).toBeVisible();
  await signIn(page, email);
  await expect(page.getByRole("alert").filter({ hasText: /\w/ })).toBeVisible();
  await expect(page).toHaveURL(/\/signin/);

  const adminCtx = await browser.newContext();
  const admin = await adminCtx.newPage();
  await signInOk(admin, adminEmail());
  await admin.goto(`/admin?q=${encodeURIComponent(email)}`);
  await expect(admin.getByRole("heading", { name: /Users \(0 matching/ })).toBeVisible();
  await adminCtx.close();
});

test("the data page works on a phone-sized screen and by keyboard", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await register(page, uniqueEmail("phone"));
  await page.goto("/settings/data");
  await expect(page.getByRole("heading", { name: "Your data" })).toBeVisible();
  // Nothing wider than the screen.
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
  await page.screenshot({ path: "test-results/settings-data-phone.png", fullPage: true });
  // Keyboard: the confirmation field, then the password, then the (enabled) button.
  await page.getByLabel(/to confirm/).focus();
  await page.keyboard.type("delete my account");
  await page.keyboard.press("Tab");
  await expect(page.getByLabel("Your password")).toBeFocused();
  await page.keyboard.type("wrong password here");
  await page.keyboard.press("Enter");
  await expect(page.getByText("That password is not right.")).toBeVisible();
});

test("memories download as JSON and import into another account, duplicates skipped", async ({ browser, page }) => {
  test.setTimeout(90_000);
  const tag = `heron${Date.now()}`;
  await register(page, uniqueEmail("memfrom"));
  // Add one memory by hand on the dashboard, then export it.
  await page.goto("/settings/memory");
  await page.getByLabel("New memory").fill(`Watches the ${tag}`);
  await page.keyboard.press("Enter");
  await expect(page.getByText(`Watches the ${tag}`)).toBeVisible();
  await page.goto("/settings/data");
  const downloading = page.waitForEvent("download");
  await page.getByRole("link", { name: "Memories as JSON" }).click();
  const file = await (await downloading).path();
  const json = JSON.parse(fs.readFileSync(file!, "utf8"));
  expect(json.memories.map((m: { text: string }) => m.text)).toEqual([`Watches the ${tag}`]);

  const other = await browser.newContext();
  const p2 = await other.newPage();
  await register(p2, uniqueEmail("memto"));
  await p2.goto("/settings/data");
  await p2.getByLabel("Memories file to import").setInputFiles(file!);
  await expect(p2.getByRole("status").filter({ hasText: "Imported 1 memory; skipped 0" })).toBeVisible();
  await p2.getByLabel("Memories file to import").setInputFiles(file!);
  await expect(p2.getByRole("status").filter({ hasText: "Imported 0 memories; skipped 1" })).toBeVisible();
  await p2.goto("/settings/memory");
  await expect(p2.getByText(`Watches the ${tag}`)).toBeVisible();
  await other.close();
});

test("an admin deletes an account after typing its email", async ({ browser }) => {
  test.setTimeout(90_000);
  const email = uniqueEmail("removed");
  const userCtx = await browser.newContext();
  await register(await userCtx.newPage(), email);
  await userCtx.close();
  const adminCtx = await browser.newContext();
  const admin = await adminCtx.newPage();
  await signInOk(admin, adminEmail());
  await admin.goto(`/admin?q=${encodeURIComponent(email)}`);
  await admin.getByRole("link", { name: `Review ${email}` }).click();
  const del = admin.getByRole("button", { name: "Delete account" });
  await admin.getByLabel("Reason").fill("Requested by the user by email");
  await expect(del).toBeDisabled();
  await admin.getByLabel(`Type ${email} to confirm`).fill(email);
  await del.click();
  await expect(admin).toHaveURL(/\/admin$/);
  await admin.goto(`/admin?q=${encodeURIComponent(email)}`);
  await expect(admin.getByRole("heading", { name: /Users \(0 matching/ })).toBeVisible();
  await admin.goto("/admin/audit?action=user.delete");
  await expect(admin.getByTestId("audit-table")).toContainText("Requested by the user by email");
  await adminCtx.close();
});
