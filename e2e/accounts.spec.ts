import { expect, test } from "@playwright/test";
import { PASSWORD, register, saveAdminEmail, signIn, signInOk, signOut, uniqueEmail } from "./helpers";

// Runs first on an empty database (see playwright.config.ts projects).
test.describe.configure({ mode: "serial" });

const admin = uniqueEmail("admin");
const user = uniqueEmail("user");

test("signed-out visitors are sent to sign-in, which on a new install (nobody yet) leads to registration", async ({
  page,
}) => {
  await page.goto("/admin");
  await expect(page).toHaveURL(/\/register/);
  await expect(page.getByTestId("first-account")).toContainText("this account becomes the server's administrator");
});

test("register -> in the app -> sign out -> sign in; first user is admin", async ({ page }) => {
  await page.goto("/register");
  await expect(page.getByTestId("first-account")).toContainText("this account becomes the server's administrator");
  await register(page, admin, PASSWORD, "Ada");
  await expect(page).toHaveURL(/\/$/); // landed in the app, not left on /register
  saveAdminEmail(admin);
  await expect(page.getByRole("heading", { name: "What can I help with?" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Account menu" })).toContainText("Ada");
  await page.goto("/admin");
  await expect(page.getByRole("heading", { name: "Admin" })).toBeVisible();
  await expect(page.getByTestId(`user-row-${admin}`)).toBeVisible();
  await signOut(page);
  await signIn(page, admin);
  await expect(page.getByRole("heading", { name: "What can I help with?" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Account menu" })).toContainText("Ada");
});

test("wrong password gets one generic message", async ({ page }) => {
  await signIn(page, admin, "not the password at all");
  await expect(page.getByTestId("form-error")).toHaveText("Incorrect email or password.");
  // An unknown email gets exactly the same message.
  await signIn(page, uniqueEmail("nobody"), "not the password at all");
  await expect(page.getByTestId("form-error")).toHaveText("Incorrect email or password.");
  await expect(page).toHaveURL(/\/signin/);
});

test("registration answers the same for a taken email and a new one, and changes nothing", async ({ page }) => {
  const answer = async (email: string) => {
    await page.goto("/register");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("an attacker's password");
    await page.getByRole("button", { name: "Create account" }).click();
    // The next step: sign in, with the email filled in.
    await expect(page.getByTestId("registered-next")).toBeVisible();
    await expect(page).toHaveURL(/\/signin\?registered=1/);
    const filled = await page.getByLabel("Email").inputValue();
    expect(filled.toLowerCase()).toBe(email.toLowerCase());
    return (await page.getByTestId("registered-next").textContent())!;
  };
  const taken = await answer(admin.toUpperCase()); // emails are normalised
  const fresh = await answer(uniqueEmail("fresh"));
  expect(taken).toBe(fresh);
  expect(taken).toMatch(/sign in with the password you just chose/i);
  await page.screenshot({ path: "test-results/registered-next.png", fullPage: true });
  // The taken account keeps its password.
  await signInOk(page, admin);
  await signOut(page);
});

test("forgot password without email: the page says to ask an administrator", async ({ page }) => {
  await page.goto("/signin");
  await page.getByRole("link", { name: "Forgot your password?" }).click();
  await expect(page.getByTestId("no-mail")).toContainText("Ask an administrator");
  await page.goto("/reset-password?token=made-up");
  await expect(page.getByTestId("reset-link-invalid")).toBeVisible();
});

test("too-short password is explained next to the field", async ({ page }) => {
  await page.goto("/register");
  await page.getByLabel("Email").fill(uniqueEmail("short"));
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByText(/Password must be at least \d+ characters/)).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveAttribute("aria-invalid", "true");
});

test("second user is not admin and cannot open the admin page", async ({ page }) => {
  await register(page, user);
  await page.getByRole("button", { name: "Account menu" }).click();
  await expect(page.getByRole("menuitem", { name: "Admin" })).toHaveCount(0);
  await page.keyboard.press("Escape");
  const res = await page.goto("/admin");
  expect(res?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  const res2 = await page.goto("/admin/settings");
  expect(res2?.status()).toBe(404);
});

test("an admin disabling a user ends that user's session at once", async ({ browser }) => {
  const victimCtx = await browser.newContext();
  const victim = await victimCtx.newPage();
  const email = uniqueEmail("victim");
  await register(victim, email);

  const adminCtx = await browser.newContext();
  const adminPage = await adminCtx.newPage();
  await signInOk(adminPage, admin);
  await adminPage.goto("/admin");
  await adminPage
    .getByTestId(`user-row-${email}`)
    .getByRole("button", { name: /Disable/ })
    .click();
  await expect(adminPage.getByTestId(`user-row-${email}`).getByRole("button", { name: /Enable/ })).toBeVisible();

  await victim.goto("/settings");
  await expect(victim).toHaveURL(/\/signin/);
  await signIn(victim, email);
  await expect(victim.getByTestId("form-error")).toHaveText("Incorrect email or password.");
  await victimCtx.close();
  await adminCtx.close();
});

test("a forgotten password: the admin sets a temporary one, the user must choose their own, other sessions end", async ({
  browser,
}) => {
  test.setTimeout(60_000);
  const email = uniqueEmail("forgetful");
  const oldCtx = await browser.newContext();
  const oldDevice = await oldCtx.newPage();
  await register(oldDevice, email);

  const adminCtx = await browser.newContext();
  const adminPage = await adminCtx.newPage();
  await signInOk(adminPage, admin);
  await adminPage.goto("/admin");
  await adminPage.getByRole("link", { name: `Review ${email}` }).click();
  adminPage.once("dialog", (d) => void d.accept());
  await adminPage.getByRole("button", { name: "Set a temporary password" }).click();
  const temporary = (await adminPage.getByTestId("temporary-password").textContent())!.trim();
  expect(temporary).toHaveLength(16);

  // The device that was signed in is signed out.
  await oldDevice.goto("/settings");
  await expect(oldDevice).toHaveURL(/\/signin/);

  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await signIn(page, email, temporary);
  // Wherever sign-in leads, the app first asks for a password of their own.
  await expect(page).toHaveURL(/\/settings\/password\?required=1/);
  await page.goto("/settings/memory");
  await expect(page).toHaveURL(/\/settings\/password\?required=1/);
  await expect(page.getByTestId("password-required")).toBeVisible();
  await page.screenshot({ path: "test-results/password-required.png", fullPage: true });
  await page.getByLabel("Current password").fill(temporary);
  await page.getByLabel("New password", { exact: true }).fill("my own new password");
  await page.getByLabel("New password again").fill("my own new password");
  await page.getByRole("button", { name: "Save password" }).click();
  await expect(page.getByRole("heading", { name: "What can I help with?" })).toBeVisible();
  // The session that changed it stays signed in; the new password works elsewhere.
  await page.goto("/settings");
  await expect(page).toHaveURL(/\/settings$/);
  await signInOk(oldDevice, email, "my own new password");
  // The user sees that an administrator set it.
  await page.goto("/settings/data");
  await expect(page.getByTestId("audit-list")).toContainText("set a temporary password for you");
  await Promise.all([ctx.close(), oldCtx.close(), adminCtx.close()]);
});
