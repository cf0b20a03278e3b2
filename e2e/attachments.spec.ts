// Files and models in the browser: the admin offers a second model and marks one as seeing images; a user drops a
// PDF (written by pdf-lib) and pastes a picture into a chat; the model server receives the passages and the image
// part; the answer says where it came from; a second model answers the next turn and each answer names its model;
// the export carries the files and deleting the thread removes them.
import { expect, test, type Page } from "@playwright/test";
import { pdfOf } from "../testing/pdf";
import { TINY_PNG } from "../testing/bad-files";
import { adminEmail, mockRequests, register, scriptReplies as script, signInOk, uniqueEmail } from "./helpers";

/** Drops a file on the chat, as a file dragged from the desktop. */
async function dropFile(page: Page, name: string, type: string, bytes: Buffer) {
  const dt = await page.evaluateHandle(
    ({ name, type, b64 }) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const t = new DataTransfer();
      t.items.add(new File([data], name, { type }));
      return t;
    },
    { name, type, b64: bytes.toString("base64") },
  );
  const target = page.getByLabel("Message", { exact: true });
  await target.dispatchEvent("dragover", { dataTransfer: dt });
  await expect(page.getByTestId("drop-overlay")).toBeVisible();
  await target.dispatchEvent("drop", { dataTransfer: dt });
}

/** Pastes a file into the message box, as a screenshot (or a file copied in a file manager) on the clipboard. */
async function pasteFile(page: Page, name: string, type: string, bytes: Buffer) {
  await page.getByLabel("Message", { exact: true }).evaluate(
    (el, { name, type, b64 }) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const t = new DataTransfer();
      t.items.add(new File([data], name, { type }));
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: t, bubbles: true, cancelable: true }));
    },
    { name, type, b64: bytes.toString("base64") },
  );
}

async function setModels(page: Page, rows: Array<{ id: string; label?: string; vision?: boolean }>) {
  await page.goto("/admin/settings");
  const form = page.getByTestId("model-list-form");
  // Down to one row, then as many as asked.
  while ((await form.locator("fieldset").count()) > 1)
    await form
      .locator("fieldset")
      .last()
      .getByRole("button", { name: /^Remove/ })
      .click();
  for (let i = 1; i < rows.length; i++) await form.getByRole("button", { name: "Add a model" }).click();
  for (const [i, r] of rows.entries()) {
    const row = form.locator("fieldset").nth(i);
    await row.getByLabel("Model name on the server").fill(r.id);
    await row.getByLabel("Display name").fill(r.label ?? "");
    await row.getByLabel("Sees images").setChecked(!!r.vision);
  }
  await form.locator("fieldset").first().getByLabel("Default").check();
  await form.getByRole("button", { name: "Save models" }).click();
  await expect(form.getByRole("alert").or(form.locator("[role=status]")).first()).toContainText(/Saved/);
}

test("files and pictures in a chat, and a second model, end to end", async ({ page, browser }) => {
  test.setTimeout(150_000);
  const admin = await browser.newPage();
  await signInOk(admin, adminEmail());
  await setModels(admin, [
    { id: "mock-chat", vision: true },
    { id: "mock-alt", label: "Alt model" },
  ]);
  await admin.screenshot({ path: "test-results/attachments-admin-models.png", fullPage: true });

  try {
    await register(page, uniqueEmail("files"));
    const tag = Date.now().toString(36);
    const pdf = await pdfOf([
      `Cover page ${tag}`,
      `The deposit of ${tag} is 900 euros, paid by March. The spare keys hang in the ${tag}shed.`,
    ]);
    const appendix = await pdfOf([`Appendix ${tag}: the boiler is serviced every October.`]);
    // A PDF dropped and a picture pasted (a screenshot), then the other way round.
    await dropFile(page, "lease.pdf", "application/pdf", pdf);
    await pasteFile(page, "image.png", "image/png", TINY_PNG);
    await dropFile(page, "photo.png", "image/png", TINY_PNG);
    await pasteFile(page, "appendix.pdf", "application/pdf", appendix);
    const chips = page.getByTestId("draft-chip");
    await expect(chips).toHaveCount(4);
    await expect(chips.first()).toContainText("lease.pdf");
    await expect(chips.first()).toContainText("2 pages");
    await expect(chips.nth(1)).toContainText("image.png");
    await expect(chips.nth(2)).toContainText("photo.png");
    await expect(chips.nth(3)).toContainText("appendix.pdf");
    // The message waits while a file is still uploading (Enter does nothing then): every chip done first.
    await expect(chips.filter({ hasText: "Uploading" })).toHaveCount(0);
    await page.screenshot({ path: "test-results/attachments-composer.png" });

    const question = `How much is the deposit ${tag}?`;
    await script([{ match: tag, content: `The deposit is 900 euros, paid by March [lease.pdf, p. 2].` }]);
    await page.getByLabel("Message", { exact: true }).fill(question);
    await page.keyboard.press("Enter");
    const answer = page.getByTestId("message-assistant").last();
    await expect(answer).toHaveAttribute("data-status", "complete");
    await expect(chips).toHaveCount(0);

    // The answer's request (titles and learning go to the memory model with the same words).
    const asked = async (text: string) =>
      (await mockRequests())
        .filter((r) => r.body.model !== "mock-memory" && JSON.stringify(r.body).includes(text))
        .at(-1)!;
    const sent = await asked(question);
    expect(sent.body.model).toBe("mock-chat");
    const system = String(sent.body.messages[0].content);
    expect(system).toContain(`The deposit of ${tag} is 900 euros, paid by March.`);
    expect(system).toContain(`Appendix ${tag}: the boiler is serviced every October.`);
    const last = sent.body.messages.at(-1)!.content as unknown as Array<{ type: string; image_url?: { url: string } }>;
    expect(last[0]).toEqual({ type: "text", text: question });
    expect(last.slice(1).map((p) => p.image_url?.url)).toEqual([
      `data:image/png;base64,${TINY_PNG.toString("base64")}`,
      `data:image/png;base64,${TINY_PNG.toString("base64")}`,
    ]);

    await expect(answer.getByTestId("answer-sources")).toHaveText(/Answered from: lease\.pdf, p\. 2/);
    const files = page.getByTestId("sent-attachments");
    await expect(files.getByRole("img", { name: "image.png" })).toBeVisible();
    await expect(files.getByRole("link", { name: /lease\.pdf/ })).toBeVisible();
    await expect(answer.getByTestId("answer-model")).toHaveText("mock-chat");
    await page.screenshot({ path: "test-results/attachments-answer.png", fullPage: true });
    // On a phone: the files, the answer's sources and the picker still fit.
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(answer.getByTestId("answer-sources")).toBeVisible();
    // The sidebar has slid away (a drawer on a phone).
    const sidebar = page.getByRole("complementary", { name: "Sidebar" });
    await expect.poll(async () => (await sidebar.boundingBox())?.x ?? 0).toBeLessThan(-200);
    await page.screenshot({ path: "test-results/attachments-phone.png" });
    await page.setViewportSize({ width: 1280, height: 720 });

    // The document is found by the sidebar's search, with its file and page; the hit opens its message.
    await page.getByLabel("Search chats").fill(`${tag}shed`);
    const hit = page.getByTestId("message-hit");
    await expect(hit).toHaveCount(1);
    await expect(hit.getByTestId("hit-file")).toHaveText("In lease.pdf, p. 2");
    await expect(hit.locator("mark")).toHaveText(`${tag}shed`);
    await page.screenshot({ path: "test-results/attachments-search.png" });
    await hit.click();
    await expect(page).toHaveURL(/#item-/);
    await page.getByLabel("Search chats").fill("");

    // The picture opens full size, as a picture; the document's text opens as text.
    const imgHref = await files.getByRole("link", { name: "image.png", exact: true }).getAttribute("href");
    const img = await page.request.get(imgHref!);
    expect(img.headers()["content-type"]).toBe("image/png");
    expect(img.headers()["x-content-type-options"]).toBe("nosniff");
    const docHref = await files.getByRole("link", { name: /lease\.pdf/ }).getAttribute("href");
    expect(await (await page.request.get(docHref!)).text()).toContain(`The deposit of ${tag} is 900 euros`);
    // Another user gets nothing.
    const stranger = await browser.newPage();
    await register(stranger, uniqueEmail("stranger"));
    expect((await stranger.request.get(imgHref!)).status()).toBe(404);

    // The next turn with the other model: each answer names its model.
    await page.getByTestId("model-picker").selectOption("mock-alt");
    await script([{ match: `again ${tag}`, content: "Still 900 euros." }]);
    // Sent while a file still uploads (the upload held here), the message says it waits, then goes by itself.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route("**/api/attachments?*", async (route) => {
      if (route.request().method() === "POST") await held;
      await route.continue();
    });
    await dropFile(page, "notes.txt", "text/plain", Buffer.from(`Notes ${tag}: the meter reads 4711.`));
    await page.getByLabel("Message", { exact: true }).fill(`And again ${tag}?`);
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("composer-waiting")).toHaveText("Sends when the files finish uploading.");
    await expect(chips.filter({ hasText: "Uploading" })).toHaveCount(1);
    await expect(page.getByTestId("message-user")).toHaveCount(1);
    await page.screenshot({ path: "test-results/attachments-waiting.png" });
    release();
    await expect(page.getByTestId("message-user")).toHaveCount(2);
    await page.unroute("**/api/attachments?*");
    await expect(page.getByTestId("composer-waiting")).toHaveCount(0);
    await expect(page.getByTestId("message-assistant").last()).toHaveAttribute("data-status", "complete");
    await expect(page.getByTestId("answer-model")).toHaveText(["mock-chat", "Alt model"]);
    const second = await asked(`And again ${tag}?`);
    expect(second.body.model).toBe("mock-alt");
    await page.reload();
    await expect(page.getByTestId("model-picker")).toHaveValue("mock-alt");
    await expect(page.getByTestId("answer-model")).toHaveText(["mock-chat", "Alt model"]);

    // The export carries the files; deleting the thread removes them.
    const exported = await (await page.request.get("/api/export")).json();
    const ids = exported.attachments.map((a: { id: string }) => a.id);
    expect(exported.attachments.map((a: { name: string }) => a.name).sort()).toEqual([
      "appendix.pdf",
      "image.png",
      "lease.pdf",
      "notes.txt",
      "photo.png",
    ]);
    const pdfRow = exported.attachments.find((a: { name: string }) => a.name === "lease.pdf");
    expect(Buffer.from(pdfRow.data, "base64").equals(pdf)).toBe(true);
    page.once("dialog", (d) => void d.accept());
    await page
      .getByRole("button", { name: /^Actions for/ })
      .first()
      .click();
    await page.getByRole("menuitem", { name: /Delete/ }).click();
    await expect(page).toHaveURL(/\/$/);
    const after = await (await page.request.get("/api/export")).json();
    expect(after.attachments).toEqual([]);
    for (const id of ids) expect((await page.request.get(`/api/attachments/${id}`)).status()).toBe(404);
  } finally {
    await setModels(admin, [{ id: "mock-chat" }]);
  }
});

test("bad files get a clear message and leave nothing behind", async ({ page }) => {
  await register(page, uniqueEmail("badfiles"));
  const upload = (name: string, body: Buffer | string) =>
    page.request.post(`/api/attachments?name=${encodeURIComponent(name)}`, {
      data: typeof body === "string" ? Buffer.from(body) : body,
      headers: { "content-type": "application/octet-stream", origin: new URL(page.url()).origin },
    });
  const empty = await upload("empty.txt", Buffer.alloc(0));
  expect(empty.status()).toBe(422);
  expect((await empty.json()).error).toMatch(/empty/);
  const svg = await upload("logo.png", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  expect(svg.status()).toBe(415);
  const traversal = await upload("../../etc/passwd", "root:x:0:0");
  expect(traversal.status()).toBe(201);
  expect((await traversal.json()).name).toBe("passwd");
  // Through the composer: a refused file shows its reason on its chip, and the message is not blocked by it.
  await page.getByTestId("attach-input").setInputFiles({
    name: "song.mp3",
    mimeType: "audio/mpeg",
    buffer: Buffer.from("ID3\u0003\u0000\u0000\u0000\u0000\u0000\u0000" + "x".repeat(64)),
  });
  await expect(page.getByTestId("draft-chip")).toContainText(/can't be attached|not a kind of file/);
  await page.screenshot({ path: "test-results/attachments-refused.png" });
});
