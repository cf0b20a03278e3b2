import { expect, test } from "@playwright/test";
import { register, send, uniqueEmail } from "./helpers";

test("search finds a message by a word from its body and opens the thread at it", async ({ page }) => {
  test.setTimeout(60_000);
  await register(page, uniqueEmail("searcher"));
  const word = `zucchini${Date.now().toString(36)}`;
  await send(page, `My ${word} plants have powdery mildew, what should I do?`);
  await expect(page).toHaveURL(/\/c\//);
  const threadUrl = page.url();
  for (let i = 0; i < 6; i++) await send(page, `Filler question number ${i} about something else entirely.`);
  await page.getByRole("link", { name: "New chat" }).click();
  await send(page, "A different conversation about the weather.");

  await page.getByLabel("Search chats").fill(word);
  const hit = page.getByTestId("message-hit");
  await expect(hit).toHaveCount(2); // the question, and the mock's answer that echoes it
  await expect(hit.first().locator("mark")).toHaveText(word);
  await page.screenshot({ path: "test-results/search-hits.png" });
  await hit.last().click(); // the older one: the question
  await expect(page).toHaveURL(new RegExp(`${threadUrl.split("/c/")[1]}#item-`));
  const found = page.locator('[data-found="true"]');
  await expect(found).toContainText(word);
  await expect(found).toBeInViewport();
  await page.screenshot({ path: "test-results/search-opened.png" });
});

test("a misspelled search word finds the word it was meant to be, marked as written in the message", async ({
  page,
}) => {
  test.setTimeout(60_000);
  await register(page, uniqueEmail("misspeller"));
  const place = `Quinta${Date.now().toString(36).replace(/\d/g, "")}`;
  await send(page, `The parcel from ${place} was received this morning.`);
  await expect(page).toHaveURL(/\/c\//);
  await page.getByLabel("Search chats").fill(`recieved parcel ${place}`);
  const hit = page.getByTestId("message-hit");
  await expect(hit.first()).toBeVisible();
  await expect(hit.first().locator("mark").first()).toHaveText("parcel");
  await expect(hit.first().locator("mark", { hasText: "received" })).toHaveCount(1);
  // The page says what else it searched for.
  await expect(page.getByTestId("respelled")).toHaveText(/Also searched for “received”.* for “recieved”/);
  await page.screenshot({ path: "test-results/search-misspelled.png" });
});
