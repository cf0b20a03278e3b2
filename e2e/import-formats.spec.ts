// One browser test per import format, on the apps' own files (tests/fixtures/import/real): what the user reads
// in the imported thread has no HTML, no citation markers and no reasoning; tool calls are folded tool notes.
import fs from "node:fs";
import path from "node:path";
import { strToU8, zipSync } from "fflate";
import { expect, test, type Page } from "@playwright/test";
import { register, uniqueEmail } from "./helpers";

const REAL = (name: string) => path.resolve("tests/fixtures/import/real", name);
const OURS = (name: string) => path.resolve("tests/fixtures/import", name);
const LEAKS = /<details|<\/?summary|<think|:::thinking|【|\ue200|Thought for \d|&quot;|&gt;/;

/** A zip of these files under test-results (the browser uploads it from disk), its path. */
function zipFile(name: string, files: Record<string, Uint8Array>): string {
  const file = path.resolve("test-results", `${name}-${Date.now().toString(36)}.zip`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, zipSync(files));
  return file;
}

async function importFile(page: Page, file: string, expected: string) {
  await page.goto("/settings/data");
  await page.getByLabel("Conversations file to import").setInputFiles(file);
  await expect(page.getByTestId("import-result")).toContainText(expected);
}

/** The thread as the user reads it: every message's visible text. */
async function readThread(page: Page, title: string) {
  await page.getByTestId("thread-list").getByRole("link", { name: title }).click();
  await expect(page.getByTestId("thread-title")).toContainText(title);
  const messages = page.locator(
    '[data-testid="message-user"], [data-testid="message-assistant"], [data-testid="tool-note"]',
  );
  await expect(messages.first()).toBeVisible();
  return (await messages.allInnerTexts()).join("\n\n");
}

test("ChatGPT: numbered references match the sources, custom instructions wait for review with their origin", async ({
  page,
}) => {
  await register(page, uniqueEmail("import-gpt"));
  await importFile(page, REAL("chatgpt-citations-instructions.json"), "Imported 1 conversation");
  const result = page.getByTestId("import-result");
  await expect(result).toContainText("1 skipped: empty conversation (no messages).");
  await expect(result).toContainText("custom instructions became 4 memories waiting for your review");
  const text = await readThread(page, "Citation Convo");
  expect(text).not.toMatch(LEAKS);
  expect(text).toContain("hybrid environments[1][2].");
  expect(text).toContain("Sources:");
  // The numbered list the references point into, in their order.
  const sources = page.getByTestId("message-assistant").last().locator("ol > li");
  await expect(sources).toHaveCount(4);
  await expect(sources.nth(0)).toContainText("Signal Sciences - Crunchbase Company Profile & Funding");
  await expect(sources.nth(3)).toContainText("Fastly Agrees to Acquire Signal Sciences for $775 Million - Cooley");
  await expect(page.getByTestId("tool-note")).toHaveCount(2); // the search call and its results, folded
  await page.screenshot({ path: "test-results/import-chatgpt-citations.png", fullPage: true });

  await page.goto("/settings/memory");
  const card = page.getByTestId("memory").filter({ hasText: "I have a dog named Rufus." });
  await expect(card).toContainText("waiting for review");
  await expect(card.getByTestId("memory-origin")).toHaveText("from ChatGPT custom instructions: about you");
  await expect(
    page.getByTestId("memory").filter({ hasText: "Use metric units." }).getByTestId("memory-origin"),
  ).toHaveText("from ChatGPT custom instructions: how to answer");
  await page.screenshot({ path: "test-results/import-custom-instructions.png", fullPage: true });
});

test("ChatGPT's newer zip (conversations-000.json, -001…): every part imports; canvas and deep research read right", async ({
  page,
}) => {
  await register(page, uniqueEmail("import-gpt-split"));
  const research = JSON.parse(fs.readFileSync(REAL("chatgpt-deep-research.json"), "utf8"));
  const file = zipFile("chatgpt-split", {
    "conversations-000.json": fs.readFileSync(REAL("chatgpt-canvas.json")),
    "conversations-001.json": strToU8(JSON.stringify(research)),
    "chat.html": strToU8("<html>not read</html>"),
  });
  await importFile(page, file, "Imported 4 conversations");
  const canvas = await readThread(page, "Barista cover letter");
  expect(canvas).toContain("Dear Ms. Alvarez,");
  expect(canvas).not.toMatch(/Successfully created text document|\\n/);
  const report = await readThread(page, "Low-light houseplants");
  expect(report).toContain("Cat-safe plants for low light");
  expect(report).not.toMatch(/session_id|api_tool|waiting_for_user_response/);
  await page.screenshot({ path: "test-results/import-chatgpt-research.png", fullPage: true });
});

test("ChatGPT's zip with message_feedback.json: the answers show the 👍 / 👎 given there", async ({ page }) => {
  await register(page, uniqueEmail("import-gpt-feedback"));
  const file = zipFile("chatgpt-feedback", {
    "message_feedback.json": fs.readFileSync(REAL("chatgpt-message-feedback.json")),
    "conversations.json": fs.readFileSync(OURS("chatgpt-conversations.json")),
  });
  await importFile(page, file, "Your 3 ratings of answers there are on the same answers here.");
  await readThread(page, "Trip to Lisbon");
  const answers = page.getByTestId("message-assistant");
  const rated = answers.filter({ hasText: "Max needs a microchip" });
  await expect(rated.getByRole("button", { name: "Good answer" })).toHaveAttribute("aria-pressed", "true");
  await expect(rated.getByRole("button", { name: "Bad answer" })).toHaveAttribute("aria-pressed", "false");
  await page.screenshot({ path: "test-results/import-chatgpt-feedback.png", fullPage: true });
});

test("Claude: an attached file's text as the message's attachment, thinking absent", async ({ page }) => {
  await register(page, uniqueEmail("import-claude"));
  await importFile(page, OURS("claude-conversations.json"), "Imported 1 conversation (2 messages) from Claude.");
  const text = await readThread(page, "Knitting pattern");
  expect(text).not.toMatch(LEAKS);
  expect(text).toContain("64 stitches divide evenly by 4");
  const file = page.getByTestId("sent-attachments").getByRole("link", { name: /pattern\.txt/ });
  await expect(file).toBeVisible();
  expect(await (await page.request.get((await file.getAttribute("href"))!)).text()).toContain("Cast on 64 stitches");
});

test("Claude's export zip: projects.json becomes projects with their instructions, memories.json waits for review", async ({
  page,
}) => {
  await register(page, uniqueEmail("import-claude-zip"));
  const tag = Date.now().toString(36);
  const projects = [
    {
      uuid: `p-${tag}`,
      name: `Thesis ${tag}`,
      prompt_template: "Reply as my supervisor.",
      is_starter_project: false,
      docs: [
        { uuid: `d-${tag}`, filename: "methods.md", content: `# Methods ${tag}\n\nDrip irrigation against furrows.` },
      ],
    },
    { uuid: `s-${tag}`, name: "How to use Claude", prompt_template: "", is_starter_project: true, docs: [] },
  ];
  const file = zipFile("claude-export", {
    "conversations.json": fs.readFileSync(OURS("claude-conversations.json")),
    "projects.json": strToU8(JSON.stringify(projects)),
    "users.json": strToU8("[]"),
    "memories.json": strToU8(
      JSON.stringify([
        {
          conversations_memory: `**Personal context**\n\nThe user keeps bees ${tag}. They live near Braga.`,
          project_memories: { [`p-${tag}`]: "The thesis compares two irrigation methods." },
          account_uuid: "acct",
        },
      ]),
    ),
  });
  await importFile(page, file, "Imported 1 conversation (2 messages) from Claude.");
  await expect(page.getByTestId("import-result")).toContainText("Projects: 1 added");
  await expect(page.getByTestId("import-result")).toContainText("1 project knowledge file came with them");
  await expect(page.getByTestId("import-result")).toContainText(
    "What Claude remembered about you became 3 memories waiting for your review",
  );
  await page.screenshot({ path: "test-results/import-claude-zip-result.png", fullPage: true });
  await page.goto("/settings/memory");
  const bees = page.getByTestId("memory").filter({ hasText: `The user keeps bees ${tag}.` });
  await expect(bees).toContainText("waiting for review");
  await expect(bees.getByTestId("memory-origin")).toHaveText("from Claude's memory of you");
  await page.screenshot({ path: "test-results/import-claude-memory.png", fullPage: true });
  await page.reload();
  // The sidebar's project (the project's memory on this page links to it too, once the list has rendered).
  await page
    .getByTestId("project-list")
    .getByRole("link", { name: `Thesis ${tag}` })
    .click();
  await expect(page.getByLabel("Instructions")).toHaveValue("Reply as my supervisor.");
  await expect(page.getByRole("link", { name: "How to use Claude" })).toHaveCount(0);
  // The knowledge file is a chat in the project, its text as Claude had it.
  await page.getByRole("link", { name: "methods.md (project knowledge)" }).first().click();
  await expect(page.getByTestId("message-user").first()).toContainText(`Methods ${tag}`);
  await expect(page.getByTestId("message-user").first()).toContainText("Drip irrigation against furrows.");
  await page.screenshot({ path: "test-results/import-claude-project-file.png", fullPage: true });
});

test("Claude as real exports are: an artifact reads as the answer's code, tool calls fold, no thinking", async ({
  page,
}) => {
  await register(page, uniqueEmail("import-claude-real"));
  await importFile(page, REAL("claude-observed-shapes.json"), "Imported 2 conversations");
  const text = await readThread(page, "Budget tracker");
  expect(text).not.toMatch(LEAKS);
  expect(text).not.toMatch(/Plan: a small Python script|keep this short|used artifacts/);
  await expect(page.getByTestId("message-assistant").first().locator("pre")).toContainText("def total(path):");
  await expect(page.getByTestId("tool-note")).toHaveCount(2);
  await page.screenshot({ path: "test-results/import-claude-artifacts.png", fullPage: true });
});

test("Open WebUI: reasoning absent, tool calls and code runs as folded notes, no HTML", async ({ page }) => {
  await register(page, uniqueEmail("import-owui"));
  await importFile(page, REAL("openwebui-serialized-blocks.json"), "from Open WebUI");
  const text = await readThread(page, "Porto, factorials and Paris");
  expect(text).not.toMatch(LEAKS);
  expect(text).not.toMatch(/look it up rather than guess|raw reasoning/);
  expect(text).toContain("Paris is the capital of France.");
  const notes = page.getByTestId("tool-note");
  await expect(notes).toHaveCount(3);
  await expect(notes.first()).toContainText("Tool: web_search (imported)");
  await notes.first().locator("summary").click();
  await expect(notes.first()).toContainText("Result: Porto municipality: 231,962");
  await page.screenshot({ path: "test-results/import-open-webui.png", fullPage: true });
});

test("LibreChat: the messagesTree export with its branches, and an agent's tool call without its thinking", async ({
  page,
}) => {
  await register(page, uniqueEmail("import-lc"));
  await importFile(
    page,
    REAL("librechat-messagesTree.json"),
    "Imported 1 conversation (9 messages, 2 edited branches) from LibreChat.",
  );
  const text = await readThread(page, "Troubleshooting Python Virtual Environment Activation Issue");
  expect(text).not.toMatch(LEAKS);
  await expect(page.getByText("It looks like you might have been amused")).toBeVisible();

  await importFile(page, REAL("librechat-agent-content.json"), "Imported 1 conversation");
  const agent = await readThread(page, "Weather in Lisbon");
  expect(agent).not.toMatch(LEAKS);
  expect(agent).not.toMatch(/wants current conditions|same tool result series|429/);
  expect(agent).toContain("Tomorrow should be a little warmer");
  await expect(page.getByTestId("tool-note")).toContainText("Tool: get_weather (imported)");
  await page.screenshot({ path: "test-results/import-librechat.png", fullPage: true });
});
