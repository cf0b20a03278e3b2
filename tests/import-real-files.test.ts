// Imports of the apps' own files (tests/fixtures/import/real, see its README): LibreChat's three JSON layouts and
// its agents' content parts, Open WebUI's <details> blocks and `output` items, ChatGPT's citation markers, custom
// instructions and empty entries. What lands is checked as the user will read it: no HTML, no markers, no reasoning.
import { openAttachment } from "@/lib/attachments/store";
import crypto from "node:crypto";
import { strToU8, zipSync } from "fflate";
import { userContext } from "@/lib/user-context";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { importConversations } from "@/lib/import/run";
import { threadView } from "@/lib/chat/threads";
import { withReferences } from "@/lib/import/formats/chatgpt";
import { openWebUiParts } from "@/lib/import/formats/open-webui-content";
import { parseClaude } from "@/lib/import/formats/claude";
import { parseLibreChat } from "@/lib/import/formats/librechat";
import { parseChatGpt } from "@/lib/import/formats/chatgpt";

const real = (name: string) =>
  fs.createReadStream(path.join(__dirname, "fixtures/import/real", name), { highWaterMark: 211 });

/** What no imported text may show: HTML blocks, citation markers, reasoning. */
const LEAKS = /<details|<\/?summary|<think|:::thinking|【|\ue200|Thought for|&quot;|&gt;/;

describe.each(engines)("importing the apps' own files on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  const newUser = async (name: string) =>
    (await t.db.user.create({ data: { email: `${name}-${engine}-${crypto.randomUUID()}@example.com` } })).id;
  const shown = async (userId: string, title: string) => {
    const thread = await t.db.thread.findFirstOrThrow({ where: { userId, title } });
    return (await threadView(await userContext(t.db, userId), thread.id)).items.map((i) => ({
      role: i.role,
      content: i.content,
      tool: i.toolName,
    }));
  };
  /** The first message's attachments, opened. */
  const filesOf = async (userId: string, title: string) => {
    const thread = await t.db.thread.findFirstOrThrow({ where: { userId, title } });
    const u = await userContext(t.db, userId);
    const [first] = (await threadView(u, thread.id)).items;
    return Promise.all(
      first.attachments.map(async (a) => ({ name: a.name, text: (await openAttachment(u, a.id)).text })),
    );
  };
  const allText = async (userId: string) =>
    (await t.db.item.findMany({ where: { userId }, select: { content: true } })).map((i) => i.content).join("\n");

  it("LibreChat: flat with branches, nested `messages` and `messagesTree` all import, newest sibling shown", async () => {
    const user = await newUser("lc");
    expect(
      await importConversations(await userContext(t.db, user), real("librechat-opts-nonr-branches.json")),
    ).toMatchObject({
      format: "librechat",
      conversations: 1,
      messages: 5,
    });
    // Two first questions (an edit of the first): the later one and its answer are shown.
    expect((await shown(user, "Original")).map((m) => m.content.slice(0, 25))).toEqual([
      "tell me a long long story",
      "Of course! Here’s a detai",
    ]);
    const interrupted = await t.db.item.findFirstOrThrow({
      where: { userId: user, sourceRef: "303e4c2c-f03e-4e0a-8551-c96ec73be5fe" },
    });
    expect(interrupted.status).toBe("interrupted");

    const title = "Troubleshooting Python Virtual Environment Activation Issue";
    for (const file of ["librechat-tree.json", "librechat-messagesTree.json"]) {
      const who = await newUser("lc-tree");
      const r = await importConversations(await userContext(t.db, who), real(file));
      expect(r, file).toMatchObject({ format: "librechat", conversations: 1, messages: 9, branches: 2 });
      // LibreChat shows the last child at each fork: "lol", then its answer.
      expect(
        (await shown(who, title)).map((m) => m.content.slice(0, 20)),
        file,
      ).toEqual(["How do I use source ", "It looks like you're", "lol", "It looks like you mi"]);
    }
  });

  it("LibreChat agents: think parts and :::thinking left out, tool calls as tool notes, errors dropped", async () => {
    const user = await newUser("lc-agent");
    const r = await importConversations(await userContext(t.db, user), real("librechat-agent-content.json"));
    expect(r).toMatchObject({ conversations: 1 });
    expect(await shown(user, "Weather in Lisbon")).toEqual([
      { role: "user", content: "What's the weather in Lisbon? Answer in Celsius.", tool: null },
      {
        role: "tool",
        content: 'Call: {"city":"Lisbon","unit":"C"}\n\nResult: Lisbon: 21°C, clear sky',
        tool: "get_weather",
      },
      { role: "assistant", content: "It is **21 °C** with a clear sky in Lisbon right now.", tool: null },
      { role: "user", content: "And tomorrow?", tool: null },
      { role: "assistant", content: "Tomorrow should be a little warmer, around 23 °C.", tool: null },
      { role: "user", content: "Thanks", tool: null },
    ]);
    expect(await allText(user)).not.toMatch(/wants current conditions|same tool result series|429/);
  });

  it("Open WebUI: reasoning left out, tool calls and code runs as tool notes, no HTML left", async () => {
    const user = await newUser("owui");
    expect(
      await importConversations(await userContext(t.db, user), real("openwebui-librechat-testdata.json")),
    ).toMatchObject({
      format: "open-webui",
      conversations: 3,
    });
    expect(await shown(user, "Chat with reasoning")).toEqual([
      { role: "user", content: "What is 15 * 17?", tool: null },
      { role: "assistant", content: "255", tool: null },
    ]);
    expect(await shown(user, "Chat with tool call")).toEqual([
      { role: "user", content: "What's the weather in Paris?", tool: null },
      { role: "tool", content: 'Call: {"city":"Paris"}\n\nResult: Paris: 18C, rain', tool: "get_weather" },
      { role: "assistant", content: "The weather in Paris is 18C with rain.", tool: null },
    ]);

    const blocks = await newUser("owui-blocks");
    await importConversations(await userContext(t.db, blocks), real("openwebui-serialized-blocks.json"));
    const items = await shown(blocks, "Porto, factorials and Paris");
    expect(items.map((i) => [i.role, i.tool])).toEqual([
      ["user", null],
      ["tool", "web_search"],
      ["assistant", null],
      ["user", null],
      ["assistant", null],
      ["tool", "code_interpreter"],
      ["assistant", null],
      ["user", null],
      ["tool", "calculator"],
      ["assistant", null],
      ["user", null],
      ["assistant", null],
    ]);
    expect(items[1].content).toBe(
      'Call: {"query": "Porto population 2024"}\n\n' +
        "Result: Porto municipality: 231,962 (2021 census); metro area about 1.7 million.",
    );
    expect(items[2].content).toMatch(/^Porto has about \*\*232,000\*\* inhabitants/);
    expect(items[4].content).toBe("Let me compute that.");
    expect(items[5].content).toBe("Call: ```python\nimport math\nprint(math.factorial(10))\n```\n\nResult: 3628800");
    expect(items[8].content).toBe('Call: {"expression": "2**10"}\n\nResult: 1024');
    expect(items[11].content).toBe("Paris is the capital of France.");
    expect(await allText(user)).not.toMatch(LEAKS);
    expect(await allText(blocks)).not.toMatch(LEAKS);
    expect(await allText(blocks)).not.toMatch(/look it up rather than guess|raw reasoning/);
  });

  it("Claude: the newest branch shown, artifacts and created files as the answer showed them, thinking out", async () => {
    const user = await newUser("claude-real");
    const report = await importConversations(await userContext(t.db, user), real("claude-observed-shapes.json"));
    // The deleted chat (structure, no words) is left out and said so; the dead-end follow-up is a branch.
    expect(report).toMatchObject({ format: "claude", conversations: 2, branches: 1, skipped: { count: 1 } });
    expect(report.skipped.reasons[0].reason).toMatch(/empty conversation/);
    // No pointer to the branch shown: the newest message's, the older follow-up that carried on (not the
    // younger dead end); the sentinel parent of the first message is no message.
    expect((await shown(user, "Sourdough schedule")).map((i) => i.content)).toEqual([
      "My starter peaks at 6 hours. When should I mix?",
      "Mix about 5 to 6 hours after feeding, right at the peak.",
      "And the bulk ferment at 24 degrees?",
      "At 24 °C bulk takes roughly 4 to 5 hours.",
      "Great, thanks!",
    ]);
    const items = await shown(user, "Budget tracker");
    expect(items.map((i) => [i.role, i.tool])).toEqual([
      ["user", null],
      ["assistant", null],
      ["tool", "artifacts"],
      ["tool", "web_search"],
      ["assistant", null],
      ["user", null],
    ]);
    // Each upload once: its text when the export has it, as the message's attachment (a nameless one named by its
    // type); else a note.
    expect(items[0].content).toBe(
      "Here is my spending, can you make a tracker?\n\n" +
        "[File receipt.png not imported: binary files are not in the export]",
    );
    expect(await filesOf(user, "Budget tracker")).toEqual([
      { name: "spending.csv", text: "date,amount\n2025-04-01,12.50" },
      { name: "attachment.txt", text: "Rent is due on the 3rd." },
    ]);
    // The artifact is the answer's code, not "[used artifacts]".
    expect(items[1].content).toBe(
      "Here is a tracker to start from:\n\n**Budget tracker**\n\n```python\nimport csv\n\ndef total(path):\n" +
        "    with open(path) as f:\n        return sum(float(r['amount']) for r in csv.DictReader(f))\n\n```",
    );
    expect(items[2].content).toMatch(/^Call: \{"id":"tracker","command":"update","old_str":.*round\(float/);
    expect(items[3].content).toBe(
      'Call: {"query":"50/30/20 budget rule"}\n\n' +
        "Result: The 50/30/20 rule — https://example.org/503020\nNeeds 50%, wants 30%, savings 20%.",
    );
    expect(items[4].content).toBe(
      "**notes/budget.md**\n\n```md\n# Budget\n\nNeeds 50%, wants 30%, savings 20%.\n```\n\nIt follows the 50/30/20 rule.",
    );
    // An answer the export holds as thinking alone (its flat `text` that thinking) is not imported as words.
    const all = await allText(user);
    expect(all).not.toMatch(
      /The user asks about timing|Plan: a small Python script|keep this short|^OK$|File created/m,
    );
    expect(all).not.toMatch(/used artifacts/);
  });

  it("ChatGPT canvas: the document as the user saw it, a whole rewrite as its new version, edits as tool notes", async () => {
    const user = await newUser("canvas");
    expect(await importConversations(await userContext(t.db, user), real("chatgpt-canvas.json"))).toMatchObject({
      format: "chatgpt",
      conversations: 1,
    });
    const items = await shown(user, "Barista cover letter");
    expect(items.map((i) => [i.role, i.tool])).toEqual([
      ["user", null],
      ["assistant", null],
      ["assistant", null],
      ["user", null],
      ["assistant", null],
      ["tool", "canmore.update_textdoc"],
      ["assistant", null],
    ]);
    expect(items[1].content).toBe(
      "**Cover letter**\n\nDear Ms. Alvarez,\n\nI would love to join **Café Lume** as a barista.\n\nBest,\nSam",
    );
    expect(items[4].content).toBe(
      '**Canvas (updated)**\n\n```python\nprint("Dear Ms. Alvarez,")\n' +
        'print("I would love to join Café Lume as a barista.")\n\n```',
    );
    expect(items[5].content).toMatch(/Alvarez-Reyes/);
    // The tool's bookkeeping ("Successfully created text document…") is not part of the conversation.
    expect(await allText(user)).not.toMatch(/Successfully (created|updated) text document|\\n/);
  });

  it("ChatGPT deep research: the report from the app's widget state, once, with its sources; voice as its words", async () => {
    const user = await newUser("research");
    expect(await importConversations(await userContext(t.db, user), real("chatgpt-deep-research.json"))).toMatchObject({
      format: "chatgpt",
      conversations: 3,
    });
    const items = await shown(user, "Low-light houseplants");
    expect(items.map((i) => [i.role, i.tool])).toEqual([
      ["user", null],
      ["user", null],
      ["assistant", null],
    ]);
    // The user's follow-up answered the plan they selected: the quote says to what.
    expect(items[1].content).toBe("> Low-light houseplants\n\nonly ones that are safe for cats");
    expect(items[2].content).toMatch(/^# Cat-safe plants for low light\n/);
    expect(items[2].content).toMatch(/non-toxic to cats\[1\]\./);
    expect(items[2].content).toMatch(/Sources:\n1\. Plants safe for cats — https:\/\/example\.org\/cat-safe-plants$/);
    const all = await allText(user);
    expect(all).not.toMatch(/session_id|websocket|verify=|waiting_for_user_response|api_tool|user_query/);
    expect(all).not.toMatch(LEAKS);
    // The PDF is noted (its contents are not in the export); the photo once, where it appears.
    expect((await shown(user, "Lease clause"))[0].content).toBe(
      "[image not imported]\n\nIs this clause normal for a lease?\n\n" +
        "[File lease.pdf not imported: the export has no file contents]",
    );
    // A voice chat reads as what was said; the recordings are not "[audio not imported]" beside their words.
    expect((await shown(user, "Voice: lower back")).map((i) => i.content)).toEqual([
      "What's a good stretch for my lower back?",
      "Try a knee-to-chest stretch, thirty seconds a side.",
    ]);
  });

  it("ChatGPT's newer zip: conversations split into conversations-000.json, -001… all import, in one go", async () => {
    // Exports since early 2026 split conversations.json into numbered parts, each a JSON array of its own.
    const [canvas] = JSON.parse(
      fs.readFileSync(path.join(__dirname, "fixtures/import/real/chatgpt-canvas.json"), "utf8"),
    );
    const research = JSON.parse(
      fs.readFileSync(path.join(__dirname, "fixtures/import/real/chatgpt-deep-research.json"), "utf8"),
    );
    const zip = zipSync({
      "conversations-000.json": strToU8(JSON.stringify([canvas])),
      "user.json": strToU8("{}"),
      "chat.html": strToU8("<html>not read</html>"),
      "conversations-001.json": strToU8(JSON.stringify(research.slice(0, 2))),
      "conversations-002.json": strToU8(JSON.stringify(research.slice(2))),
      "__MACOSX/._conversations-000.json": strToU8("junk"),
    });
    const user = await newUser("split");
    const report = await importConversations(await userContext(t.db, user), [zip]);
    expect(report).toMatchObject({ format: "chatgpt", conversations: 4, skipped: { count: 0 } });
    expect(report.error).toBeUndefined();
    const titles = (await t.db.thread.findMany({ where: { userId: user }, select: { title: true } })).map(
      (x) => x.title,
    );
    expect(titles.sort()).toEqual([
      "Barista cover letter",
      "Lease clause",
      "Low-light houseplants",
      "Voice: lower back",
    ]);
    // Again: nothing new.
    expect(await importConversations(await userContext(t.db, user), [zip])).toMatchObject({
      conversations: 0,
      duplicates: 4,
    });
  });

  it("Open WebUI: an answer's [1] markers keep their sources, numbered as Open WebUI numbered them; files named", async () => {
    const user = await newUser("owui-sources");
    await importConversations(await userContext(t.db, user), real("openwebui-sources.json"));
    expect((await shown(user, "Solar panels")).map((i) => i.content)).toEqual([
      "How much do solar panels save on this bill?\n\n[File bill.pdf not imported: the export has no file contents]",
      "About 40% of the bill [1], more with a home battery [2].\n\nSources:\n" +
        "1. Solar savings guide — https://example.org/a\n2. Home batteries — https://example.org/b\n3. bill.pdf",
    ]);
  });

  it("ChatGPT: markers become numbered references that match the Sources list", async () => {
    const user = await newUser("gpt-cite");
    const r = await importConversations(await userContext(t.db, user), real("chatgpt-citations-instructions.json"));
    expect(r).toMatchObject({ format: "chatgpt", conversations: 1 });
    expect(r.skipped.reasons).toEqual([{ reason: "empty conversation (no messages)", count: 1, examples: ["Empty"] }]);
    const answer = (await shown(user, "Citation Convo")).at(-1)!.content;
    expect(answer).not.toMatch(LEAKS);
    expect(answer).toContain("hybrid environments[1][2].");
    expect(answer).toContain("operating online[3][4].");
    expect(answer).toMatch(
      /\n\nSources:\n1\. Signal Sciences - Crunchbase Company Profile & Funding — https:\/\/www\.crunchbase\.com\/organization\/signal-sciences\n2\. Demand More from Your WAF/,
    );
    expect(answer).toMatch(
      /\n3\. Fastly Completes Acquisition of Signal Sciences \| Fastly — https:\/\/www\.fastly\.com\//,
    );
    expect(answer).toMatch(/\n4\. Fastly Agrees to Acquire Signal Sciences for \$775 Million - Cooley — https:/);
  });

  it("ChatGPT: custom instructions wait for review as memories, once, with their origin; empty entries say so", async () => {
    const user = await newUser("gpt-ci");
    const r = await importConversations(await userContext(t.db, user), real("chatgpt-citations-instructions.json"));
    expect(r.customInstructions).toEqual({ added: 4, skipped: 0 });
    const pending = await t.db.memory.findMany({ where: { userId: user }, orderBy: { createdAt: "asc" } });
    expect(pending.map((m) => [m.text, m.kind, m.status, m.sourceRef])).toEqual([
      ["I work in application security at a bank in Lisbon.", "fact", "pending", "chatgpt:custom-instructions:about"],
      ["I have a dog named Rufus.", "fact", "pending", "chatgpt:custom-instructions:about"],
      ["Use metric units.", "preference", "pending", "chatgpt:custom-instructions:answers"],
      ["Cite sources for facts about companies.", "preference", "pending", "chatgpt:custom-instructions:answers"],
    ]);
    const thread = await t.db.thread.findFirstOrThrow({ where: { userId: user } });
    expect(pending.every((m) => m.sourceThreadId === thread.id)).toBe(true);
    // The preamble ChatGPT wraps them in is not a memory, nor a message.
    expect(await allText(user)).not.toMatch(/quietly think|I have a dog/);

    const modern = await newUser("gpt-modern");
    const m = await importConversations(await userContext(t.db, modern), real("chatgpt-modern-export.json"));
    expect(m).toMatchObject({ format: "chatgpt", conversations: 2, customInstructions: { added: 2, skipped: 0 } });
    expect(m.skipped.reasons).toEqual([
      { reason: "empty conversation (no messages)", count: 1, examples: ["Corrupted entry"] },
    ]);
    expect((await t.db.memory.findMany({ where: { userId: modern } })).map((x) => x.text).sort()).toEqual([
      "Answer concisely.",
      "The user is an SRE.",
    ]);
    // Importing again adds no second copy.
    const again = await importConversations(await userContext(t.db, modern), real("chatgpt-modern-export.json"));
    expect(again.customInstructions).toEqual({ added: 0, skipped: 2 });
  });
});

describe("format details", () => {
  it("ChatGPT: a message on the reasoning channel ('analysis') is left out; 'commentary' and 'final' are shown", () => {
    const node = (id: string, parent: string | null, role: string, text: string, channel: string | null) => ({
      id,
      parent,
      children: [],
      message: { id, author: { role }, channel, content: { content_type: "text", parts: [text] }, recipient: "all" },
    });
    const conv = parseChatGpt({
      id: "gpt-channels",
      current_node: "a3",
      mapping: {
        u1: node("u1", null, "user", "Is 1001 prime?", null),
        a1: node("a1", "u1", "assistant", "We need to check divisibility by 7, 11, 13.", "analysis"),
        a2: node("a2", "a1", "assistant", "Let me check small factors.", "commentary"),
        a3: node("a3", "a2", "assistant", "No: 1001 = 7 × 11 × 13.", "final"),
      },
    });
    expect(conv.messages.map((m) => m.content)).toEqual([
      "Is 1001 prime?",
      "Let me check small factors.",
      "No: 1001 = 7 × 11 × 13.",
    ]);
  });

  it("LibreChat: the files a message came with are named (images as images), the export having no contents", () => {
    const conv = parseLibreChat({
      conversationId: "lc-files",
      endpoint: "openAI",
      messages: [
        {
          messageId: "m1",
          parentMessageId: "00000000-0000-0000-0000-000000000000",
          isCreatedByUser: true,
          text: "Compare these",
          files: [
            { file_id: "f1", filename: "notes.txt", filepath: "/uploads/u/f1__notes.txt", type: "text/plain" },
            {
              file_id: "f2",
              filename: "cat.png",
              filepath: "/images/u/f2.png",
              type: "image/png",
              width: 8,
              height: 8,
            },
          ],
        },
        { messageId: "m2", parentMessageId: "m1", isCreatedByUser: false, text: "Done." },
      ],
    });
    expect(conv.messages.map((m) => m.content)).toEqual([
      "Compare these\n\n[File notes.txt not imported: the export has no file contents]\n\n[image cat.png not imported]",
      "Done.",
    ]);
  });

  it("Claude: an artifact's type names its code's language when the call names none; a markdown one reads as text", () => {
    const artifact = (input: Record<string, unknown>) => ({
      uuid: "c",
      chat_messages: [{ uuid: "a", sender: "assistant", content: [{ type: "tool_use", name: "artifacts", input }] }],
    });
    const shown = (input: Record<string, unknown>) => parseClaude(artifact(input)).messages[0].content;
    expect(shown({ command: "create", title: "Page", type: "text/html", content: "<p>hi</p>" })).toBe(
      "**Page**\n\n```html\n<p>hi</p>\n```",
    );
    expect(shown({ command: "create", title: "Flow", type: "application/vnd.ant.mermaid", content: "graph TD" })).toBe(
      "**Flow**\n\n```mermaid\ngraph TD\n```",
    );
    expect(shown({ command: "create", title: "Notes", type: "text/markdown", content: "# Notes" })).toBe(
      "**Notes**\n\n# Notes",
    );
    // A type no table lists (or one named like an object's own property) gets a plain fence.
    expect(shown({ command: "create", title: "X", type: "constructor", content: "x" })).toBe("**X**\n\n```\nx\n```");
  });

  it("newer ChatGPT exports: content_references by marker text, footnote sources listed, unknown markers removed", () => {
    const body =
      "Lisbon is Portugal's capital \ue200cite\ue202turn0search0\ue201 and Porto is second \ue200cite\ue202turn9\ue201.";
    const out = withReferences(body, {
      content_references: [
        {
          matched_text: "\ue200cite\ue202turn0search0\ue201",
          type: "grouped_webpages",
          items: [
            { title: "Lisbon - Wikipedia", url: "https://en.wikipedia.org/wiki/Lisbon", attribution: "Wikipedia" },
          ],
        },
        {
          matched_text: " ",
          type: "sources_footnote",
          sources: [{ title: "Porto", url: "https://example.org/porto" }],
        },
      ],
    });
    expect(out).toBe(
      "Lisbon is Portugal's capital [1] and Porto is second .\n\nSources:\n" +
        "1. Lisbon - Wikipedia — https://en.wikipedia.org/wiki/Lisbon\n2. Porto — https://example.org/porto",
    );
  });

  it("Open WebUI: a <details> the answer wrote itself stays; an unfinished <think> is left out", () => {
    expect(openWebUiParts("<details><summary>Spoiler</summary>It was the butler.</details>")).toEqual([
      { role: "assistant", content: "<details><summary>Spoiler</summary>It was the butler.</details>" },
    ]);
    expect(openWebUiParts("<think>half a thought")).toEqual([]);
  });
});
