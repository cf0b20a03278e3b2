import fs from "node:fs";
import { expect, type Page } from "@playwright/test";

export const PASSWORD = "correct horse battery";

export function uniqueEmail(prefix: string): string {
  return `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
}

export async function register(page: Page, email: string, password = PASSWORD, name?: string) {
  await page.goto("/register");
  if (name) await page.getByLabel("Name (optional)").fill(name);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Create account" }).click();
  // Only the first account signs in at once; others land on sign-in with the email filled in, whether or not
  // the email was new (registration does not reveal which emails have accounts).
  const menu = page.getByRole("button", { name: "Account menu" });
  const next = page.getByTestId("registered-next");
  await expect(menu.or(next)).toBeVisible();
  if (await next.isVisible()) {
    await expect(page.getByLabel("Email")).toHaveValue(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }
  await expect(menu).toBeVisible();
}

export async function signIn(page: Page, email: string, password = PASSWORD) {
  await page.goto("/signin");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

export async function signOut(page: Page) {
  await page.getByRole("button", { name: "Account menu" }).click();
  await page.getByRole("menuitem", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/signin/);
}

/** The mock LLM's control API (it runs on the app's port + 1). */
export function mockUrl(): string {
  return `http://127.0.0.1:${Number(process.env.E2E_PORT ?? 3100) + 1}`;
}

export async function signInOk(page: Page, email: string, password = PASSWORD) {
  await signIn(page, email, password);
  await expect(page.getByRole("button", { name: "Account menu" })).toBeVisible();
}

// The first account (the admin) is made by accounts.spec.ts; later specs sign in as it.
const ADMIN_FILE = "test-results/e2e-admin.json";
export function saveAdminEmail(email: string) {
  fs.mkdirSync("test-results", { recursive: true });
  fs.writeFileSync(ADMIN_FILE, JSON.stringify({ email }));
}
export function adminEmail(): string {
  return JSON.parse(fs.readFileSync(ADMIN_FILE, "utf8")).email;
}

/** A request the mock model server received, as it recorded it. */
export type MockRequest = {
  id: number;
  path: string;
  body: { model: string; messages: { role: string; content: string }[] };
};

/** Scripts the mock model server's next replies (see testing/mock-llm.ts). */
export async function scriptReplies(replies: object[]) {
  await fetch(`${mockUrl()}/__mock/replies`, { method: "POST", body: JSON.stringify({ replies }) });
}

/** Every request the mock model server has received. */
export async function mockRequests(): Promise<MockRequest[]> {
  return (await (await fetch(`${mockUrl()}/__mock/requests`)).json()).requests;
}

/** The last chat request (not a title, summary or extraction) whose last message is `text`. */
export async function chatRequest(text: string): Promise<MockRequest> {
  const found = (await mockRequests()).filter(
    (q) =>
      q.path === "/v1/chat/completions" && q.body.model === "mock-chat" && q.body.messages.at(-1)?.content === text,
  );
  expect(found.length, `a chat request ending with ${text}`).toBeGreaterThan(0);
  return found.at(-1)!;
}

/** Sends a message in the open chat and waits until its answer has finished (or failed). */
export async function send(page: Page, text: string) {
  await page.getByLabel("Message", { exact: true }).fill(text);
  await page.keyboard.press("Enter");
  await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", /complete|failed/);
}
