import OpenAI from "openai";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { adminEmail, chatRequest, register, scriptReplies as script, send, signInOk, uniqueEmail } from "./helpers";

const EXTRACTION = "You maintain a user's long-term memory";

async function person(browser: Browser, name: string) {
  const page = await (await browser.newContext()).newPage();
  const email = uniqueEmail(name.toLowerCase());
  await register(page, email, undefined, name);
  return { page, email, name };
}

/** Reloads until `check` passes: learning runs after the answer, in the background. */
async function eventually(page: Page, check: () => Promise<void>) {
  await expect(async () => {
    await page.reload();
    await check();
  }).toPass({ timeout: 20_000 });
}

test("a shared project with three people: invite, chat, a memory taught by one and used by another, review, a viewer refused, leaving", async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const tag = Date.now().toString(36);
  const [ada, ben, cy] = [await person(browser, "Ada"), await person(browser, "Ben"), await person(browser, "Cy")];

  // Ada starts a shared project and invites Ben as an editor and Cy as a viewer.
  await ada.page.getByRole("link", { name: "New project" }).first().click();
  await ada.page.getByLabel("Name", { exact: true }).fill(`Garden ${tag}`);
  await ada.page.getByLabel("Instructions").fill(`Answer as a gardener ${tag}.`);
  await ada.page.getByTestId("project-share").check();
  // A shared project keeps to its own memories unless the owner chooses otherwise.
  await expect(ada.page.getByLabel(/The project's memories only/)).toBeChecked();
  await ada.page.getByRole("button", { name: "Create project" }).click();
  await expect(ada.page.getByTestId("project-role")).toContainText("you are the owner");
  const projectUrl = ada.page.url();
  for (const [who, role] of [
    [ben, "editor"],
    [cy, "viewer"],
  ] as const) {
    await ada.page.getByLabel("Invite by email").fill(who.email);
    await ada.page.getByLabel("Their role").selectOption(role);
    await ada.page.getByRole("button", { name: "Invite" }).click();
    await expect(ada.page.locator(`[data-member="${who.email}"]`)).toBeVisible();
  }
  // Inviting an address nobody signs in with says so, and keeps what was typed.
  await ada.page.getByLabel("Invite by email").fill(`nobody-${tag}@example.com`);
  await ada.page.getByRole("button", { name: "Invite" }).click();
  // An address without an account: the invitation waits for it (the e2e server's registration is open), listed,
  // and can be withdrawn.
  await expect(ada.page.getByText(/No one signs in here as .* yet: the invitation waits/)).toBeVisible();
  await expect(ada.page.locator(`[data-invite="nobody-${tag}@example.com"]`)).toContainText("invited as viewer");
  await ada.page.screenshot({ path: "test-results/shared-project-owner.png", fullPage: true });
  await ada.page.locator(`[data-invite="nobody-${tag}@example.com"]`).getByRole("button", { name: "Withdraw" }).click();
  await expect(ada.page.locator(`[data-invite="nobody-${tag}@example.com"]`)).toHaveCount(0);

  // Ada's chat teaches the project something.
  await script([
    {
      // Matched on the message too: a late extraction of another test's chat (a retry) must not take this reply.
      system: EXTRACTION,
      match: `We water the roses on Sundays ${tag}`,
      json: { decisions: [{ op: "ADD", text: `The roses are watered on Sundays ${tag}` }] },
    },
  ]);
  await ada.page.getByTestId("project-new-chat").click();
  await send(ada.page, `We water the roses on Sundays ${tag}`);
  await expect(ada.page).toHaveURL(/\/c\//);
  const adasChat = ada.page.url();
  expect(JSON.stringify((await chatRequest(`We water the roses on Sundays ${tag}`)).body.messages)).toContain(
    `Answer as a gardener ${tag}.`,
  );

  // Ben sees the project in his sidebar, Ada's chat marked as hers and her memory marked as taught by her.
  await ben.page.goto(projectUrl);
  await expect(ben.page.getByTestId("project-role")).toContainText("you are an editor");
  await eventually(ben.page, async () => {
    await expect(ben.page.getByTestId("project-memory").filter({ hasText: `roses are watered` })).toContainText(
      "learned from Ada's chat",
    );
  });
  await expect(ben.page.getByTestId("project-threads")).toContainText("Ada");
  // He reads her chat but cannot continue it.
  await ben.page.goto(adasChat);
  await expect(ben.page.getByTestId("thread-author")).toContainText("by Ada");
  await expect(ben.page.getByTestId("read-only-note")).toBeVisible();
  await expect(ben.page.getByLabel("Message", { exact: true })).toHaveCount(0);
  await ben.page.screenshot({ path: "test-results/shared-project-read-only.png" });
  // His own chat in the project is answered with her memory.
  await ben.page.goto(`${projectUrl}/chat`);
  const bensQuestion = `When are the roses watered? ${tag}`;
  await send(ben.page, bensQuestion);
  const bensChat = ben.page.url();
  expect(JSON.stringify((await chatRequest(bensQuestion)).body.messages)).toContain(
    `The roses are watered on Sundays ${tag}`,
  );

  // With review on, what the project learns waits for an editor: Ben approves what Ada's next chat taught.
  await ada.page.goto(projectUrl);
  await ada.page.getByTestId("project-review-setting").check();
  await expect(ada.page.getByTestId("project-review-setting")).toBeChecked();
  // Shown checked at once; the chat below must start after the server has it.
  await expect(ada.page.getByText("Saved.", { exact: true })).toBeVisible();
  await script([
    {
      system: EXTRACTION,
      match: `The shed key is under the pot ${tag}`,
      json: { decisions: [{ op: "ADD", text: `The shed key is under the pot ${tag}` }] },
    },
  ]);
  await ada.page.getByTestId("project-new-chat").click();
  await send(ada.page, `The shed key is under the pot ${tag}`);
  await ben.page.goto(projectUrl);
  await eventually(ben.page, async () => {
    await expect(ben.page.getByTestId("project-review")).toContainText("shed key");
  });
  await ben.page.getByTestId("project-review").getByRole("button", { name: "Approve" }).click();
  await expect(ben.page.getByTestId("project-memory-list")).toContainText("shed key");
  // And Ben teaches one of his own by hand.
  await ben.page.getByLabel("New project memory").fill(`The hose is in the barn ${tag}`);
  await ben.page.getByRole("button", { name: "Add", exact: true }).click();
  await expect(ben.page.getByTestId("project-memory").filter({ hasText: "hose" })).toContainText("added by Ben");

  // Cy, a viewer, reads everything and writes nothing, whichever way she tries.
  await cy.page.goto(projectUrl);
  await expect(cy.page.getByTestId("project-role")).toContainText("you are a viewer");
  await expect(cy.page.getByTestId("project-memory-list")).toContainText("roses are watered");
  await expect(cy.page.getByTestId("project-new-chat")).toHaveCount(0);
  await expect(cy.page.getByRole("button", { name: /Forget/ })).toHaveCount(0);
  await expect(cy.page.getByLabel("Invite by email")).toHaveCount(0);
  await cy.page.screenshot({ path: "test-results/shared-project-viewer.png", fullPage: true });
  await cy.page.goto(`${projectUrl}/chat`);
  await expect(cy.page).toHaveURL(projectUrl);
  const projectId = projectUrl.split("/p/")[1];
  const posted = await cy.page.evaluate(async (id) => {
    const r = await fetch("/api/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "send", projectId: id, content: "let me in" }),
    });
    return r.status;
  }, projectId);
  expect(posted).toBe(403);
  await cy.page.goto(adasChat);
  await expect(cy.page.getByTestId("read-only-note")).toBeVisible();

  // Keys scoped to the project act with their owner's role as it is at each request: Cy's (a viewer's) reads the
  // project's memory but cannot chat; Ben's works until he leaves, then stops at once.
  const keyOf = async (who: typeof ben) => {
    await who.page.goto("/settings/keys");
    await who.page.getByLabel("Name", { exact: true }).fill("laptop");
    for (const scope of ["chat", "memory:read"])
      await who.page.getByRole("checkbox", { name: new RegExp(scope.replace(":", ".*")) }).check();
    await who.page.getByLabel("Project", { exact: true }).selectOption({ label: `Garden ${tag}` });
    await who.page.getByRole("button", { name: "Create key" }).click();
    return (await who.page.getByTestId("new-key-value").textContent())!.trim();
  };
  const v1 = (key: string) => new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: key, maxRetries: 0 });
  const ask = (key: string) =>
    v1(key).chat.completions.create({ model: "mnemo", messages: [{ role: "user", content: `Hello ${tag}` }] });
  const [bensKey, cysKey] = [await keyOf(ben), await keyOf(cy)];
  await expect(ask(cysKey)).rejects.toMatchObject({ status: 403 });
  expect((await ask(bensKey)).choices[0].message.content).toBeTruthy();

  // Ben leaves: his chat goes, and so does the memory only he taught; Ada's stay.
  await ben.page.goto(projectUrl);
  ben.page.once("dialog", (d) => void d.accept());
  await ben.page.getByTestId("project-leave").click();
  await expect(ben.page).toHaveURL(/\/$/);
  await expect(ask(bensKey)).rejects.toMatchObject({ status: 403 });
  await ben.page.goto(bensChat);
  await expect(ben.page.getByText(/not found/i).first()).toBeVisible();
  await ada.page.goto(projectUrl);
  await expect(ada.page.getByTestId("project-memory-list")).toContainText("roses are watered");
  await expect(ada.page.getByTestId("project-memory-list")).toContainText("shed key");
  await expect(ada.page.getByTestId("project-memory-list")).not.toContainText("hose is in the barn");
  await expect(ada.page.locator(`[data-member="${ben.email}"]`)).toHaveCount(0);
  await ada.page.getByText("History").click();
  await expect(ada.page.getByTestId("project-history")).toContainText("Ben left");
  await ada.page.screenshot({ path: "test-results/shared-project-after-leave.png", fullPage: true });

  // The owner changes Cy's role, then removes her: her open page finds nothing, and the history says so.
  await ada.page.getByLabel(/^Role of Cy/).selectOption("editor");
  await expect(ada.page.getByText("Role changed.")).toBeVisible();
  ada.page.once("dialog", (d) => void d.accept());
  await ada.page.locator(`[data-member="${cy.email}"]`).getByRole("button", { name: "Remove" }).click();
  await expect(ada.page.locator(`[data-member="${cy.email}"]`)).toHaveCount(0);
  await expect(ada.page.getByTestId("project-history")).toContainText("Cy became editor");
  await expect(ada.page.getByTestId("project-history")).toContainText("Cy was removed");
  await cy.page.goto(projectUrl);
  await expect(cy.page.getByText(/not found/i).first()).toBeVisible();

  // An admin opens Ada's shared chat (with a reason): the project's members are named, and Ada sees the read.
  const admin = await (await browser.newContext()).newPage();
  await signInOk(admin, adminEmail());
  await admin.goto("/admin");
  await admin.getByLabel("Search users by email or name").fill(ada.email);
  await admin.getByRole("button", { name: "Search" }).click();
  await admin.getByRole("link", { name: `Review ${ada.email}` }).click();
  await admin
    .getByRole("button", { name: /Open conversation/ })
    .first()
    .click();
  await admin.getByLabel(/Reason for opening this conversation/).fill(`Abuse report ${tag}`);
  await admin.getByRole("button", { name: "Record reason and open" }).click();
  await expect(admin.getByTestId("review-thread-members")).toContainText("Ada (owner)");
  await ada.page.goto("/settings/data");
  await expect(ada.page.getByTestId("audit-list")).toContainText(`Abuse report ${tag}`);
});

test("sharing a project one already has: its chat comes along, marked as the owner's, and a member reads it", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const tag = Date.now().toString(36);
  const [ada, ben] = [await person(browser, "Ada"), await person(browser, "Ben")];
  await ada.page.getByRole("link", { name: "New project" }).first().click();
  await ada.page.getByLabel("Name", { exact: true }).fill(`Allotment ${tag}`);
  await ada.page.getByRole("button", { name: "Create project" }).click();
  await expect(ada.page.getByTestId("project-name")).toHaveText(`Allotment ${tag}`);
  const projectUrl = ada.page.url();
  await ada.page.getByTestId("project-new-chat").click();
  await send(ada.page, `Our plot is number 42 ${tag}`);
  await ada.page.goto(projectUrl);
  ada.page.once("dialog", (d) => void d.accept());
  await ada.page.getByTestId("project-share-existing").click();
  await expect(ada.page.getByTestId("project-role")).toContainText("you are the owner");
  await ada.page.getByLabel("Invite by email").fill(ben.email);
  await ada.page.getByRole("button", { name: "Invite" }).click();
  await expect(ada.page.locator(`[data-member="${ben.email}"]`)).toBeVisible();

  await ben.page.goto(projectUrl);
  await expect(ben.page.getByTestId("project-threads")).toContainText("Ada");
  await ben.page.getByTestId("project-threads").getByRole("link").first().click();
  await expect(ben.page.getByTestId("message-user").first()).toHaveText(`Our plot is number 42 ${tag}`);
  await expect(ben.page.getByTestId("read-only-note")).toBeVisible();
  // Ada goes on in her chat, now the project's.
  await ada.page.getByTestId("project-threads").getByRole("link").first().click();
  await send(ada.page, `And the shed key? ${tag}`);
  await expect(ada.page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");

  // Ben moves a chat of his own in, from its menu (asked first): Ada reads it, marked as his.
  await ben.page.goto("/");
  await send(ben.page, `Compost turned on Fridays ${tag}`);
  ben.page.once("dialog", (d) => void d.accept());
  await ben.page
    .getByRole("button", { name: /^Actions for/ })
    .first()
    .click();
  await ben.page.getByRole("menuitem", { name: /Move to project/ }).click();
  await ben.page.getByRole("menuitem", { name: `Allotment ${tag}` }).click();
  await expect(ben.page.getByText(`Moved to Allotment ${tag}.`)).toBeVisible();
  await ada.page.goto(projectUrl);
  await expect(ada.page.getByTestId("project-threads")).toContainText("Ben");
  await ada.page.getByTestId("project-threads").getByRole("link").filter({ hasText: "Ben" }).click();
  await expect(ada.page.getByTestId("message-user").first()).toHaveText(`Compost turned on Fridays ${tag}`);
  await expect(ada.page.getByTestId("read-only-note")).toBeVisible();
});

test("the owner lets members' own memories help their own answers: Ada sees hers used, Ben reading her chat sees none", async ({
  browser,
}) => {
  test.setTimeout(90_000);
  const tag = Date.now().toString(36);
  const [ada, ben] = [await person(browser, "Ada"), await person(browser, "Ben")];
  await ada.page.goto("/settings/memory");
  await ada.page.getByLabel("New memory").fill(`Ada is allergic to bee stings ${tag}`);
  await ada.page.getByRole("button", { name: "Add" }).click();
  await expect(ada.page.getByTestId("memory")).toHaveCount(1);

  await ada.page.goto("/p/new");
  await ada.page.getByLabel("Name", { exact: true }).fill(`Hives ${tag}`);
  await ada.page.getByTestId("project-share").check();
  await ada.page.getByLabel(/Also each member's own memories/).check();
  await ada.page.getByRole("button", { name: "Create project" }).click();
  await expect(ada.page.getByTestId("project-role")).toContainText("you are the owner");
  const projectUrl = ada.page.url();
  await ada.page.getByLabel("Invite by email").fill(ben.email);
  await ada.page.getByRole("button", { name: "Invite" }).click();
  await expect(ada.page.locator(`[data-member="${ben.email}"]`)).toBeVisible();

  await ada.page.getByTestId("project-new-chat").click();
  // A file attached in the shared project: uploaded to the project, sent, and opened by Ben below.
  await ada.page.getByTestId("attach-input").setInputFiles({
    name: "hive-log.txt",
    mimeType: "text/plain",
    buffer: Buffer.from(`Hive 2 swarmed on Tuesday ${tag}`),
  });
  await expect(ada.page.getByTestId("draft-chip")).toContainText(/\d+ B/);
  const question = `May I open the bee hives today ${tag}?`;
  await script([
    { match: question, content: `Wear gloves: you are allergic [memory: Ada is allergic to bee stings].` },
  ]);
  await send(ada.page, question);
  const sent = JSON.stringify((await chatRequest(question)).body.messages);
  expect(sent).toContain(`Hive 2 swarmed on Tuesday ${tag}`);
  expect(sent).toContain(`Ada is allergic to bee stings ${tag}`);
  expect(sent).toContain("From the asking member's own memory");
  await ada.page.getByTestId("memories-used").last().locator("summary").click();
  await expect(ada.page.getByTestId("memory-mine")).toBeVisible();
  await ada.page.screenshot({ path: "test-results/shared-own-memory.png", fullPage: true });

  // Ben reads Ada's chat: the answer, not her memory.
  await ben.page.goto(projectUrl);
  await ben.page.getByTestId("project-threads").getByRole("link").first().click();
  await expect(ben.page.getByTestId("message-assistant").last()).toContainText("Wear gloves");
  await expect(ben.page.getByTestId("memories-used")).toHaveCount(0);
  await expect(ben.page.getByText(`Ada is allergic to bee stings ${tag}`)).toHaveCount(0);
  const href = await ben.page.getByTestId("sent-attachments").getByRole("link").getAttribute("href");
  const file = await ben.page.request.get(href!);
  expect(file.status()).toBe(200);
  expect(await file.text()).toContain(`Hive 2 swarmed on Tuesday ${tag}`);
  // An editor sees no memory-mode choice: it is the owner's.
  await ben.page.goto(projectUrl);
  await expect(ben.page.getByLabel(/Also each member's own memories/)).toHaveCount(0);

  // Ada moves her memory into the project from her memory page (asked first): now Ben sees it, as added by Ada.
  await ada.page.goto("/settings/memory");
  ada.page.once("dialog", (d) => void d.accept());
  await ada.page.getByTestId("memory-move").selectOption({ label: `Hives ${tag}` });
  await expect(ada.page.getByText("Moved to the project.")).toBeVisible();
  await ben.page.goto(projectUrl);
  await expect(
    ben.page.getByTestId("project-memory").filter({ hasText: `Ada is allergic to bee stings ${tag}` }),
  ).toContainText("added by Ada");
});
