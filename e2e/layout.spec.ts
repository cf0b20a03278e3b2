// On a phone, no page scrolls sideways, and no table scrolls inside its box
// either (each row stacks as a card). (Screen-reader-only labels inside a scrolling table once pushed the
// whole admin page to 652 px wide at 375.)
import { test, expect } from "@playwright/test";
import { adminEmail, signInOk } from "./helpers";

test("at 375 px wide, no page of the app or the admin area is wider than the screen", async ({ browser }) => {
  const ctx = await browser.newContext({ viewport: { width: 375, height: 800 } });
  const page = await ctx.newPage();
  await signInOk(page, adminEmail());
  await page.goto("/admin");
  const review = page.getByRole("link", { name: /^Review / }).first();
  const userPage = (await review.getAttribute("href"))!;
  for (const url of [
    "/",
    "/settings",
    "/settings/memory",
    "/settings/data",
    "/admin",
    userPage,
    "/admin/audit",
    "/admin/settings",
  ]) {
    await page.goto(url);
    await page.waitForLoadState("networkidle");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${url} is ${width} px wide`).toBeLessThanOrEqual(375);
    // Nor does a table scroll sideways inside its box: on a phone each row is a card.
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll("table")]
        .filter((t) => t.scrollWidth > (t.parentElement?.clientWidth ?? 0) + 1)
        .map((t) => t.getAttribute("data-testid") ?? "a table"),
    );
    expect(wide, `${url}: tables wider than the screen`).toEqual([]);
  }
  await ctx.close();
});
