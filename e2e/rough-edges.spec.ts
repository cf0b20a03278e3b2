// The small things a new user and an admin hit first: Test connection tests what is typed, one memory count on
// the dashboard, the feedback toast clear of Send, every audited action in the audit filter.
import { expect, test } from "@playwright/test";
import { adminEmail, mockUrl, register, signInOk, uniqueEmail } from "./helpers";

test("Test connection tests the typed settings, before they are saved", async ({ page }) => {
  await signInOk(page, adminEmail());
  await page.goto("/admin/settings");
  const baseUrl = page.getByLabel("Base URL");
  const saved = await baseUrl.inputValue();
  const alert = page.getByRole("alert").or(page.getByRole("status"));

  // Nothing listens on port 9: the typed URL fails, whatever is saved.
  await baseUrl.fill("http://127.0.0.1:9/v1");
  await page.getByRole("button", { name: "Test connection" }).click();
  await expect(page.getByText(/^Connected/)).toHaveCount(0);
  await expect(alert.first()).toBeVisible();
  await expect(alert.first()).not.toContainText("Connected");

  // The mock model server, typed: connected, and it says which URL it tested.
  const mock = `${mockUrl()}/v1`;
  await baseUrl.fill(mock);
  await page.getByRole("button", { name: "Test connection" }).click();
  await expect(page.getByText(`Connected to ${mock}:`)).toBeVisible();

  // Testing saved nothing.
  await page.reload();
  await expect(page.getByLabel("Base URL")).toHaveValue(saved);

  // A URL without its scheme is refused on Save, and the field keeps what was typed under the error.
  await page.getByLabel("Base URL").fill("localhost:5110/v1");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(alert.first()).toContainText(/http/i);
  await expect(page.getByLabel("Base URL")).toHaveValue("localhost:5110/v1");
  await page.reload();
  await expect(page.getByLabel("Base URL")).toHaveValue(saved);
});

test("the dashboard header and the meter give the same token count", async ({ page }) => {
  await register(page, uniqueEmail("counts"));
  await page.goto("/settings/memory");
  for (const text of ["I live in Porto and cycle to work", "Prefers answers in metric units", "Has a cat named Miso"]) {
    await page.getByPlaceholder(/Add a memory/).fill(text);
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await expect(page.getByTestId("memory").filter({ hasText: text })).toBeVisible();
  }
  const header = (await page.getByTestId("memory-totals").textContent()) ?? "";
  const meter = (await page.getByTestId("profile-meter").textContent()) ?? "";
  const headerTokens = header.match(/([\d,]+) tokens? in the prompt/)?.[1];
  const meterTokens = meter.match(/take ([\d,]+) of/)?.[1];
  expect(header).toContain("3 active memories");
  expect(headerTokens, `${header} | ${meter}`).toBeDefined();
  expect(headerTokens).toBe(meterTokens);
});

test("the thanks after a rating never covers the Send button, on a laptop or a phone", async ({ page }) => {
  await register(page, uniqueEmail("toast"));
  for (const viewport of [
    { width: 1280, height: 720 },
    { width: 390, height: 800 },
  ]) {
    await page.setViewportSize(viewport);
    await page.goto("/");
    await page.getByLabel("Message", { exact: true }).fill(`Hello there ${viewport.width}`);
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");
    await page.getByRole("button", { name: "Bad answer" }).last().click();
    // Typed and sent at once, while the 👎 may still be saving.
    await page.getByLabel("What was wrong? (optional)").fill("Too long");
    await page.keyboard.press("Enter");
    const toast = page.getByText("Thanks. Mnemo will learn from this.").last();
    await expect(toast).toBeVisible();
    const a = (await toast.boundingBox())!;
    const send = (await page.getByRole("button", { name: "Send message (Enter)" }).boundingBox())!;
    const overlaps =
      a.x < send.x + send.width && send.x < a.x + a.width && a.y < send.y + send.height && send.y < a.y + a.height;
    expect(overlaps, `toast ${JSON.stringify(a)} over Send ${JSON.stringify(send)}`).toBe(false);
    await page.screenshot({ path: `test-results/toast-${viewport.width}.png` });
  }
});

test("a 👎's comment can be added after a reload, and changed", async ({ page }) => {
  await register(page, uniqueEmail("later"));
  await page.getByLabel("Message", { exact: true }).fill("Tell me something");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");
  await page.getByRole("button", { name: "Bad answer" }).last().click();
  await page.keyboard.press("Escape");
  await expect(page.getByRole("button", { name: "Bad answer" }).last()).toHaveAttribute("aria-pressed", "true");
  await page.reload();
  const bad = page.getByRole("button", { name: "Bad answer" }).last();
  await expect(bad).toHaveAttribute("aria-pressed", "true");
  await page.getByRole("button", { name: "Say what was wrong" }).click();
  await page.getByLabel("What was wrong? (optional)").fill("It ignored my question");
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("feedback-comment")).toHaveText("“It ignored my question”");
  await page.reload();
  await expect(page.getByTestId("feedback-comment")).toHaveText("“It ignored my question”");
  await expect(bad).toHaveAttribute("aria-pressed", "true");
  await page.getByRole("button", { name: "Change comment" }).click();
  await expect(page.getByLabel("What was wrong? (optional)")).toHaveValue("It ignored my question");
});

for (const [locale, looksLike] of [
  ["de-DE", /^\d{2}\.\d{2}\.\d{4}$/],
  ["en-US", /^[A-Z][a-z]{2} \d{1,2}, \d{4}$/],
] as const) {
  test.describe(`dates in the ${locale} browser`, () => {
    test.use({ locale });
    test("every date on the memory page is in the browser's format", async ({ page }) => {
      await register(page, uniqueEmail(`dates-${locale.toLowerCase()}`));
      await page.goto("/settings/memory");
      await page.getByLabel("New memory").fill("Prefers tea to coffee");
      await page.getByRole("button", { name: "Add", exact: true }).click();
      const dates = page.getByTestId("memory").locator("time");
      await expect(dates.first()).toHaveText(looksLike);
      for (const text of await dates.allTextContents()) expect(text).toMatch(looksLike);
    });
  });
}

test("the audit filter offers every audited action, daily limits included", async ({ page }) => {
  await signInOk(page, adminEmail());
  await page.goto("/admin/audit");
  const options = await page.locator('select[name="action"]').locator("option").allTextContents();
  for (const action of ["thread.view", "user.limits", "user.password", "user.invite", "user.create"])
    expect(options).toContain(action);
  await page.locator('select[name="action"]').selectOption("user.limits");
  await page.getByRole("button", { name: /Filter|Apply/ }).click();
  await expect(page).toHaveURL(/action=user\.limits/);
});

test("a role change waits for a confirmation; the admin pages fit a 1280-pixel screen", async ({ page, browser }) => {
  const someone = uniqueEmail("promote");
  const other = await browser.newPage();
  await register(other, someone);
  await other.close();
  await signInOk(page, adminEmail());
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto("/admin");
  const role = page.getByLabel(`Role of ${someone}`);
  await role.selectOption("ADMIN");
  await expect(page.getByRole("group", { name: "Confirm the role change" })).toContainText("an admin?");
  await page.screenshot({ path: "test-results/admin-role-confirm.png" });
  await page.getByRole("button", { name: "Cancel" }).click();
  await page.reload();
  await expect(page.getByLabel(`Role of ${someone}`)).toHaveValue("USER");
  for (const path of ["/admin", "/admin/audit", "/admin/settings"]) {
    await page.goto(path);
    const { scroll, client } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(scroll, `${path} is wider than the screen`).toBeLessThanOrEqual(client);
    // Breathing room on the right, as on the other pages (the content ended flush with the window's edge).
    const right = await page
      .locator("main h1")
      .first()
      .evaluate((h) => {
        const box = h.parentElement!.getBoundingClientRect();
        return window.innerWidth - box.right;
      });
    expect(right, `${path}: space right of the content`).toBeGreaterThanOrEqual(24);
    await page.screenshot({ path: `test-results/admin-1280${path.replaceAll("/", "-")}.png`, fullPage: true });
  }
});

test.describe("on a phone", () => {
  test.use({ viewport: { width: 390, height: 800 }, isMobile: true, hasTouch: true });
  test("the composer shows no keyboard hints", async ({ page }) => {
    await register(page, uniqueEmail("phone-hint"));
    await expect(page.getByLabel("Message", { exact: true })).toBeVisible();
    await expect(page.getByTestId("keyboard-hint")).toBeHidden();
  });
});

test("the only admin deleting their account is asked who becomes admin", async ({ page }) => {
  await signInOk(page, adminEmail());
  await page.goto("/settings/data");
  const successor = page.getByLabel("You are the only admin. Who becomes admin?");
  await expect(successor).toBeVisible();
  await page.getByLabel(/Type .* to confirm/).fill("delete my account");
  await page.getByLabel("Your password").fill("wrong password for this check");
  const submit = page.getByRole("button", { name: "Delete my account and all my data" });
  await expect(submit).toBeDisabled(); // no one chosen yet
  expect(await successor.locator("option").count()).toBeGreaterThan(1);
  await successor.selectOption({ index: 1 });
  await expect(submit).toBeEnabled();
  await page.locator('[aria-labelledby="delete-heading"]').screenshot({ path: "test-results/delete-sole-admin.png" });
});
