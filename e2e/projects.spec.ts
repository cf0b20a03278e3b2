import { expect, test } from "@playwright/test";
import { adminEmail, chatRequest, register, scriptReplies as script, send, signInOk, uniqueEmail } from "./helpers";

/** The chat request whose last message is `text`, as the model server received it. */
const sentMessages = async (text: string) => JSON.stringify((await chatRequest(text)).body.messages);

test("a project: instructions reach the model, its memory stays in it, search finds its messages", async ({
  page,
  browser,
}) => {
  test.setTimeout(150_000);
  const email = uniqueEmail("projects");
  await register(page, email);
  const tag = Date.now().toString(36);
  // A general memory the project-only project must never see.
  await page.goto("/settings/memory");
  await page.getByLabel("New memory").fill(`Has a cat named Miso ${tag}`);
  await page.getByRole("button", { name: "Add" }).click();
  await expect(page.getByTestId("memory")).toHaveCount(1);

  // Create the project from the sidebar.
  await page.getByRole("link", { name: "New project" }).first().click();
  await expect(page.getByRole("heading", { name: "New project" })).toBeVisible();
  await page.getByLabel("Name", { exact: true }).fill(`Novel ${tag}`);
  await page.getByLabel("Instructions").fill(`Answer as a crime-fiction editor ${tag}.`);
  await page.getByLabel(/Project only/).check();
  await page.screenshot({ path: "test-results/projects-new.png" });
  await page.getByRole("button", { name: "Create project" }).click();
  await expect(page.getByTestId("project-name")).toHaveText(`Novel ${tag}`);
  await expect(page.getByTestId("project-list")).toContainText(`Novel ${tag}`);

  // A chat in it: the model is asked to remember something, and gets the instructions, not the general memory.
  await page.getByTestId("project-new-chat").click();
  await expect(page.getByTestId("new-in-project")).toContainText(`Novel ${tag}`);
  const word = `quillfeather${tag}`;
  const question = `remember ${tag}: the ${word} is the murder weapon, and what about my cat Miso?`;
  await script([
    {
      match: `remember ${tag}`,
      toolCalls: [{ name: "remember", arguments: { text: `The murder weapon is a ${word}`, kind: "fact" } }],
    },
    { match: `remember ${tag}`, content: "Noted for the novel." },
  ]);
  await send(page, question);
  await expect(page).toHaveURL(/\/c\//);
  const threadUrl = page.url();
  await expect(page.getByTestId("thread-project")).toContainText(`Novel ${tag}`);
  const sent = await sentMessages(question);
  expect(sent).toContain(`Answer as a crime-fiction editor ${tag}.`);
  expect(sent).not.toContain(`Has a cat named Miso ${tag}`);
  await page.screenshot({ path: "test-results/projects-chat.png" });

  // The memory page shows the memory in the project, and the scope filter finds it there.
  await page.goto("/settings/memory");
  // The meter speaks for chats outside projects, and says the project's memory is not among them.
  await expect(page.getByTestId("profile-meter")).toContainText("What the model sees in chats outside projects");
  await expect(page.getByTestId("profile-meter")).toContainText(
    "1 more memory is kept in a project and goes only into its chats",
  );
  const learned = page.getByTestId("memory").filter({ hasText: word });
  await expect(learned.getByTestId("memory-scope")).toHaveText(`in Novel ${tag}`);
  await page.getByLabel("Scope").selectOption({ label: `Novel ${tag}` });
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByTestId("memory")).toHaveCount(1);
  // Filtered to the project: the meter counts what its chats get (project-only: its one memory).
  await expect(page.getByTestId("profile-meter")).toContainText(`What the model sees in Novel ${tag}`);
  await expect(page.getByTestId("profile-meter")).toContainText("Your 1 active memory takes");
  await page.screenshot({ path: "test-results/projects-memory.png", fullPage: true });

  // A general chat does not get it.
  await page.getByRole("link", { name: "New chat" }).click();
  await send(page, `what was the murder weapon ${tag}?`);
  expect(await sentMessages(`what was the murder weapon ${tag}?`)).not.toContain(`The murder weapon is a ${word}`);

  // Search finds the project's message by a word from its body, and the click lands on it.
  await page.getByLabel("Search chats").fill(word);
  const hit = page.getByTestId("message-hit");
  await expect(hit.first()).toBeVisible();
  await hit.last().click();
  await expect(page).toHaveURL(new RegExp(`${threadUrl.split("/c/")[1]}#item-`));
  await expect(page.locator('[data-found="true"]')).toContainText(word);
  await page.screenshot({ path: "test-results/projects-search.png" });

  // The sidebar groups the project's chats under it.
  await page.getByRole("button", { name: `Show the chats of Novel ${tag}` }).click();
  await expect(page.getByTestId("project-threads-nav").getByRole("link")).toHaveCount(2); // the chat, "New chat in…"

  // An admin who opens the chat (with a reason, audited) sees which project it is in.
  const adminCtx = await browser.newContext();
  const admin = await adminCtx.newPage();
  await signInOk(admin, adminEmail());
  await admin.goto("/admin");
  await admin.getByLabel("Search users by email or name").fill(email);
  await admin.getByRole("button", { name: "Search" }).click();
  await admin.getByRole("link", { name: `Review ${email}` }).click();
  await expect(admin.getByText(`Novel ${tag}`)).toHaveCount(0); // names are user text: hidden until a reason
  // The project's chat is the older of the user's two.
  await expect(admin.getByRole("button", { name: /Open conversation/ })).toHaveCount(2);
  await admin
    .getByRole("button", { name: /Open conversation/ })
    .last()
    .click();
  await admin.getByLabel(/Reason for opening this conversation/).fill("Support request #7");
  await admin.getByRole("button", { name: "Record reason and open" }).click();
  await expect(admin.getByTestId("review-thread-place")).toHaveText(`In project “Novel ${tag}”`);
  await admin.screenshot({ path: "test-results/projects-admin-review.png", fullPage: true });
  await adminCtx.close();
});
