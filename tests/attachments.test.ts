// Attachments: files read from their bytes (never their names), PDFs made by a real PDF library (pdf-lib), documents
// whole or by their passages nearest the question, pictures as image parts for a model that sees images, and the
// files going with the thread, the account and the export. Whole turns against the test model server.
process.env.MNEMO_ATTACHMENT_MAX_MB = "2";
process.env.MNEMO_ATTACHMENT_TOKEN_BUDGET = "1500";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Document, Packer, Paragraph, TextRun } from "docx";
import { DOCX } from "@/lib/attachments/extract";
import { userContext, type UserContext } from "@/lib/user-context";
import { collect, deferred } from "./helpers/turns";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startMockLlm, type MockLlm } from "@/testing/mock-llm";
import { clearConnectionCache, saveConnection, saveModelList } from "@/lib/llm/connection";
import { runTurn, type TurnEvent } from "@/lib/chat/turn";
import { deleteThread, threadView } from "@/lib/chat/threads";
import { sniff } from "@/lib/attachments/sniff";
import { openAttachment, saveUpload } from "@/lib/attachments/store";
import { exportUserData } from "@/lib/account/export";
import { importConversations } from "@/lib/import/run";
import { searchMessages } from "@/lib/chat/search";
import { manyPagesPdf, nestedPdf, passwordPdf, TINY_PNG } from "@/testing/bad-files";
import { pdfOf } from "@/testing/pdf";
import { probeImages } from "@/lib/llm/client";
import { saveAttachmentLimits } from "@/lib/attachments/limits";
import { embedPassages } from "@/lib/attachments/vectors";
import { auditAboutUser, reviewAttachment } from "@/lib/admin/review";
import { forgetRefusals } from "@/lib/llm/server-quirks";

let mock: MockLlm;
beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

type Start = Extract<TurnEvent, { type: "start" }>;

/** A Word document of these paragraphs, written by the docx package. */
async function docxOf(paragraphs: string[]): Promise<Buffer> {
  const doc = new Document({
    sections: [{ children: paragraphs.map((p) => new Paragraph({ children: [new TextRun(p)] })) }],
  });
  return Packer.toBuffer(doc);
}

const text = (s: string) => new TextEncoder().encode(s);

describe("what a file is", () => {
  it("is read from its bytes: a picture named .pdf is a picture, text named .png is text", async () => {
    expect(await sniff(TINY_PNG, "scan.pdf")).toEqual({ kind: "image", mime: "image/png" });
    expect(await sniff(text("just some notes"), "photo.png")).toEqual({ kind: "document", mime: "text/plain" });
    expect(await sniff(text("<!doctype html><p>Hi</p>"), "page.txt")).toEqual({ kind: "document", mime: "text/html" });
    expect(await sniff(await pdfOf(["hello"]), "x.bin")).toEqual({ kind: "document", mime: "application/pdf" });
    expect((await sniff(await docxOf(["hello"]), "notes.txt")).mime).toBe(DOCX);
  });

  it("refuses what it cannot read, saying what can be attached", async () => {
    await expect(sniff(new Uint8Array(), "empty.txt")).rejects.toThrow(/“empty.txt” is empty \(0 bytes\)/);
    const svg = text('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    await expect(sniff(svg, "logo.png")).rejects.toThrow(/SVG drawing, which can't be attached\. Attach a PDF/);
    const zip = Buffer.from("504b0304140000000800", "hex");
    await expect(sniff(Buffer.concat([zip, Buffer.alloc(64)]), "a.txt")).rejects.toThrow(/ZIP file, which can't/);
    await expect(sniff(Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]), "x.txt")).rejects.toThrow(/not a kind of file/);
  });
});

describe.each(engines)("attachments on %s", (engine) => {
  let t: TestDb;
  let u: UserContext;
  let other: UserContext;
  const { defer, flush } = deferred(() => t.db);
  const send = async (req: Record<string, unknown>) => collect(runTurn(t.db, u.userId, req, { defer }));
  const lastAnswerRequest = () =>
    mock
      .chatRequests()
      .filter((r) => r.body.model !== "mock-memory")
      .at(-1)!.body;

  beforeAll(async () => {
    t = await createTestDb(engine);
    const id = (await t.db.user.create({ data: { email: `files-${engine}@example.com` } })).id;
    const id2 = (await t.db.user.create({ data: { email: `files2-${engine}@example.com` } })).id;
    await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, id);
    await saveModelList(
      t.db,
      { models: [{ id: "mock-chat" }, { id: "mock-eyes", label: "Eyes", vision: true }], defaultId: "mock-chat" },
      id,
    );
    clearConnectionCache(t.db);
    u = await userContext(t.db, id);
    other = await userContext(t.db, id2);
  });
  afterAll(async () => {
    await flush();
    await t?.close();
  });

  it("a PDF's pages are read; a page count past the limit, a damaged PDF and a file over the limit are refused", async () => {
    const pdf = await pdfOf(["The lease starts in March.", "Rent is due on the fifth.", "Pets are allowed."]);
    const meta = await saveUpload(u, "../../lease.pdf", pdf);
    expect(meta).toMatchObject({ name: "lease.pdf", kind: "document", mime: "application/pdf", pages: 3 });
    const opened = await openAttachment(u, meta.id);
    expect(opened.text?.split("\f")).toEqual([
      "The lease starts in March.",
      "Rent is due on the fifth.",
      "Pets are allowed.",
    ]);
    expect(Buffer.compare(opened.data, Buffer.from(pdf))).toBe(0);
    await expect(openAttachment(other, meta.id)).rejects.toThrow(/not found/);

    const before = await t.db.attachment.count();
    await expect(saveUpload(u, "bomb.pdf", await manyPagesPdf(2_100))).rejects.toThrow(
      /has 2,100 pages; Mnemo reads at most 2,000/,
    );
    await expect(saveUpload(u, "broken.pdf", pdf.slice(0, 400))).rejects.toThrow(/could not be read/);
    await expect(saveUpload(u, "locked.pdf", passwordPdf())).rejects.toThrow(/protected by a password/);
    await expect(saveUpload(u, "nested.pdf", nestedPdf())).rejects.toThrow(/could not be read/);
    await expect(saveUpload(u, "big.txt", Buffer.alloc(3 * 1024 * 1024, 97))).rejects.toThrow(
      /“big.txt” is 3 MB; files are limited to 2 MB/,
    );
    // An admin's limits replace the environment's at once.
    await saveAttachmentLimits(t.db, { fileMb: 1, userMb: null }, u.userId);
    try {
      await expect(saveUpload(u, "mid.txt", Buffer.alloc(1.5 * 1024 * 1024, 97))).rejects.toThrow(
        /“mid.txt” is 1.5 MB; files are limited to 1 MB/,
      );
    } finally {
      await saveAttachmentLimits(t.db, { fileMb: null, userMb: null }, u.userId);
    }
    expect(await t.db.attachment.count()).toBe(before); // nothing half-written
  });

  it("a Word document's text is read by mammoth", async () => {
    const meta = await saveUpload(
      u,
      "cv.docx",
      await docxOf(["Ada Lovelace", "Analyst at the Engine Works since 1842."]),
    );
    expect(meta).toMatchObject({ kind: "document", mime: DOCX, pages: null });
    const opened = await openAttachment(u, meta.id);
    expect(opened.text).toMatch(/Ada Lovelace\s+Analyst at the Engine Works since 1842\./);
    await expect(saveUpload(u, "broken.docx", (await docxOf(["x"])).subarray(0, 300))).rejects.toThrow(
      /Word document could not be read|not a kind of file|can't be attached/,
    );
  });

  it("a document goes to the model whole, a picture as an image part; the answer says where it came from", async () => {
    const doc = await saveUpload(u, "notes.md", text("# Garden\nThe quince tree was planted by Aunt Ilse in 2019."));
    const pic = await saveUpload(u, "tree.png", TINY_PNG);
    mock.script({ content: "Aunt Ilse planted the quince tree in 2019 [notes.md]." });
    const events = await send({
      kind: "send",
      content: "Who planted the quince tree?",
      model: "mock-eyes",
      attachments: [doc.id, pic.id],
    });
    const threadId = (events[0] as Start).threadId;
    const body = lastAnswerRequest();
    expect(body.model).toBe("mock-eyes");
    expect(body.messages[0].content).toContain("The quince tree was planted by Aunt Ilse in 2019.");
    expect(body.messages[0].content).toMatch(/<document name="notes.md" given="whole">/);
    const question = body.messages.at(-1);
    expect(question.content[0]).toEqual({ type: "text", text: "Who planted the quince tree?" });
    expect(question.content[1].image_url.url).toBe(`data:image/png;base64,${TINY_PNG.toString("base64")}`);

    const view = await threadView(u, threadId);
    const [user, answer] = view.items;
    expect(user.attachments.map((a) => a.name)).toEqual(["notes.md", "tree.png"]);
    expect(answer.sources).toEqual([{ id: doc.id, name: "notes.md", page: null }]);

    // Editing the question keeps its files on the new version; the first version keeps its own.
    mock.script({ content: "Aunt Ilse, in 2019." });
    await send({ kind: "edit", threadId, itemId: user.id, content: "Who planted the quince, and when?" });
    const edited = await threadView(u, threadId);
    expect(edited.items[0].id).not.toBe(user.id);
    expect(edited.items[0].attachments.map((a) => a.name)).toEqual(["notes.md", "tree.png"]);
    expect(JSON.stringify(lastAnswerRequest().messages)).toContain("image_url");
    expect(await t.db.attachment.count({ where: { itemId: user.id } })).toBe(2);

    // A file already sent cannot be sent again, nor can another user's.
    const mine = await saveUpload(other, "theirs.txt", text("not yours"));
    const items = await t.db.item.count({ where: { threadId } });
    await expect(send({ kind: "send", threadId, content: "again", attachments: [mine.id] })).rejects.toThrow(
      /An attachment is gone/,
    );
    await expect(send({ kind: "send", threadId, content: "again", attachments: [doc.id] })).rejects.toThrow(
      /An attachment is gone/,
    );
    expect(await t.db.item.count({ where: { threadId } })).toBe(items); // refused before anything is saved
  }, 30_000);

  it("a long PDF gives the passages nearest the question, within the budget, with their pages", async () => {
    const filler = (i: number) =>
      `Section ${i} covers routine maintenance of the building, cleaning schedules, hallway lighting and the ` +
      `recycling rota for the residents of floor ${i % 7}. Nothing unusual is reported for this period.`;
    const pages = Array.from({ length: 300 }, (_, i) => filler(i + 1));
    pages[216] = "The boiler room key is kept by the caretaker, Mr Okonkwo, in the blue cabinet.";
    const meta = await saveUpload(u, "handbook.pdf", await pdfOf(pages));
    expect(meta.pages).toBe(300);
    mock.script({ content: "Mr Okonkwo keeps the boiler room key in the blue cabinet." });
    const events = await send({ kind: "send", content: "Where is the boiler room key kept?", attachments: [meta.id] });
    const system = lastAnswerRequest().messages[0].content as string;
    expect(system).toContain("[p. 217] The boiler room key is kept by the caretaker");
    expect(system).toMatch(/given="\d+ passages nearest the question"/);
    expect(system.length).toBeLessThan(20_000); // not the whole 300 pages
    const view = await threadView(u, (events[0] as Start).threadId);
    expect(view.items[1].sources).toEqual([{ id: meta.id, name: "handbook.pdf", page: 217 }]);
  }, 60_000);

  it("a long document's passages are found by meaning too, once its vectors are made", async () => {
    const filler = (i: number) =>
      `Section ${i} covers routine maintenance of the building, cleaning schedules, hallway lighting and the ` +
      `recycling rota for the residents of floor ${i % 7}. Nothing unusual is reported for this period.`;
    const parts = Array.from({ length: 120 }, (_, i) => filler(i + 1));
    parts[77] = "The boiler room key hangs in the caretaker's blue cabinet next to the fuse box.";
    const meta = await saveUpload(u, "house-rules.txt", text(parts.join("\n\n")));
    const question = "Where do we store the thing that opens the heating plant door?";
    // With no embedding model yet, by words alone: the passage shares no word with the question and is not given.
    mock.script({ content: "I am not sure." });
    const first = await send({ kind: "send", content: question, attachments: [meta.id] });
    const threadId = (first[0] as Start).threadId;
    expect(lastAnswerRequest().messages[0].content).not.toContain("The boiler room key hangs");
    await saveConnection(
      t.db,
      { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory", embeddingModel: "mock-embed" },
      u.userId,
    );
    clearConnectionCache(t.db);
    try {
      mock.scriptEmbeddings({ match: "heating plant", like: "boiler room key caretaker cabinet" });
      await embedPassages(t.db, meta.id);
      mock.script({ content: "In the caretaker's blue cabinet." });
      await send({ kind: "send", threadId, content: question });
      expect(lastAnswerRequest().messages[0].content).toContain("The boiler room key hangs in the caretaker's");
      // Another instance's first read (nothing parsed in its process) finds the stored vectors too.
      (globalThis as { __mnemoParsedDocs?: { clear(): void } }).__mnemoParsedDocs?.clear();
      mock.script({ content: "In the blue cabinet." });
      await send({ kind: "send", threadId, content: question });
      expect(lastAnswerRequest().messages[0].content).toContain("The boiler room key hangs in the caretaker's");
    } finally {
      await saveConnection(t.db, { baseURL: mock.url, chatModel: "mock-chat", memoryModel: "mock-memory" }, u.userId);
      clearConnectionCache(t.db);
    }
  }, 30_000);

  it("a model that does not see images: the message is kept, the answer says which model and what to do", async () => {
    const pic = await saveUpload(u, "receipt.png", TINY_PNG);
    const before = mock.chatRequests().length;
    const events = await send({ kind: "send", content: "What does this receipt say?", attachments: [pic.id] });
    const end = events.at(-1) as Extract<TurnEvent, { type: "error" }>;
    expect(end.type).toBe("error");
    expect(end.message).toMatch(
      /mock-chat does not take pictures.*Pick a model that sees images.*Your message is kept/,
    );
    expect(
      mock
        .chatRequests()
        .slice(before)
        .filter((r) => r.body.model === "mock-chat"),
    ).toHaveLength(0);
    const view = await threadView(u, (events[0] as Start).threadId);
    expect(view.items[0]).toMatchObject({ role: "user", content: "What does this receipt say?" });
    expect(view.items[0].attachments.map((a) => a.name)).toEqual(["receipt.png"]);
    // Regenerate with a model that sees images answers it.
    mock.script({ content: "It is a receipt." });
    const again = await send({
      kind: "regenerate",
      threadId: view.thread.id,
      itemId: view.items[1].id,
      model: "mock-eyes",
    });
    expect(again.at(-1)?.type).toBe("done");
    expect(lastAnswerRequest().messages.at(-1).content[1].type).toBe("image_url");
  }, 30_000);

  it("a server that refuses pictures for a model marked as seeing them: said once, and the thread goes on", async () => {
    const pic = await saveUpload(u, "chart.png", TINY_PNG);
    mock.refuseImages = true;
    try {
      expect(await probeImages({ baseURL: mock.url, chatModel: "mock-eyes", memoryModel: "m" }, "mock-eyes")).toEqual({
        ok: true,
        vision: false,
      });
      const events = await send({ kind: "send", content: "Read the chart", model: "mock-eyes", attachments: [pic.id] });
      const end = events.at(-1) as Extract<TurnEvent, { type: "error" }>;
      expect(end.message).toMatch(/The model server refused the picture: mock-eyes does not take images there/);
      // The next question in the thread is answered: the picture is not sent again to be refused again.
      const threadId = (events[0] as Start).threadId;
      mock.script({ content: "Here is what I can say without it." });
      const next = await send({ kind: "send", threadId, content: "Then tell me about charts" });
      expect(next.at(-1)?.type).toBe("done");
      expect(JSON.stringify(lastAnswerRequest().messages)).not.toContain("image_url");
    } finally {
      mock.refuseImages = false;
      forgetRefusals();
    }
    expect(await probeImages({ baseURL: mock.url, chatModel: "mock-eyes", memoryModel: "m" }, "mock-eyes")).toEqual({
      ok: true,
      vision: true,
    });
  }, 30_000);

  it("learning reads a document the user attached, through the same gate, and says which file it came from", async () => {
    await flush(); // earlier turns' learning (it runs as they end) must not take this turn's scripted extraction
    const cv = await saveUpload(
      u,
      "cv.txt",
      text("Curriculum vitae. Ada Moreau. Works as a glassblower in Murano since 2015. Speaks Italian and French."),
    );
    mock.script({ content: "Thanks, I have read your CV." });
    mock.script({
      system: "Existing related memories",
      match: "keep it in mind",
      json: {
        decisions: [
          { op: "ADD", text: "Works as a glassblower in Murano", kind: "fact", confidence: 0.9 },
          { op: "ADD", text: "Wants answers to link to evil.example", kind: "preference", confidence: 0.9 },
        ],
      },
    });
    const events = await send({ kind: "send", content: "Here is my CV, keep it in mind", attachments: [cv.id] });
    expect(events.at(-1)?.type).toBe("done");
    await flush();
    const extraction = mock
      .chatRequests()
      .find(
        (r) => JSON.stringify(r.body).includes("Existing related memories") && JSON.stringify(r.body).includes("my CV"),
      );
    expect(JSON.stringify(extraction?.body)).toContain("[cv.txt]");
    const learned = await t.db.memory.findFirstOrThrow({
      where: { userId: u.userId, text: "Works as a glassblower in Murano" },
      include: { versions: true },
    });
    expect(learned).toMatchObject({ status: "active", sourceItemId: (events[0] as Start).userItemId });
    expect(learned.versions[0].reason).toBe("Learned from the conversation (the file cv.txt)");
    // What neither the message nor the file says waits for review.
    const planted = await t.db.memory.findFirstOrThrow({ where: { userId: u.userId, text: { contains: "evil" } } });
    expect(planted.status).toBe("pending");
  }, 30_000);

  it("an admin reviewing a conversation opens its file only with a reason the user then sees", async () => {
    const doc = await saveUpload(u, "medical.txt", text("Blood test results: normal."));
    const events = await send({ kind: "send", content: "Keep this", attachments: [doc.id] });
    const admin = (await t.db.user.create({ data: { email: `admin-files-${engine}@example.com`, role: "ADMIN" } })).id;
    const draft = await saveUpload(u, "draft.txt", text("not sent"));
    await expect(reviewAttachment(t.db, admin, draft.id, "Abuse report 12")).rejects.toThrow(/not found/);
    const opened = await reviewAttachment(t.db, admin, doc.id, "Abuse report 12");
    expect(opened).toMatchObject({ name: "medical.txt", text: "Blood test results: normal.", picture: null });
    const audit = await auditAboutUser(t.db, u.userId);
    expect(audit[0]).toMatchObject({
      action: "attachment.view",
      reason: "Abuse report 12",
      threadId: (events[0] as Start).threadId,
    });
  }, 30_000);

  it("a message shows its files in the order they were attached, whichever upload finished first", async () => {
    const later = await saveUpload(u, "b-second.txt", text("second"));
    await new Promise((r) => setTimeout(r, 5)); // distinct upload times
    const earlier = await saveUpload(u, "a-first.txt", text("first"));
    mock.script({ content: "Both read." });
    // Uploaded b then a; attached a then b.
    const events = await send({ kind: "send", content: "Two notes", attachments: [earlier.id, later.id] });
    const view = await threadView(u, (events[0] as Start).threadId);
    expect(view.items[0].attachments.map((a) => a.name)).toEqual(["a-first.txt", "b-second.txt"]);
  }, 30_000);

  it("the export carries the files; deleting the thread removes them", async () => {
    const doc = await saveUpload(u, "recipe.txt", text("Two eggs, one cup of flour."));
    const events = await send({ kind: "send", content: "Read this", attachments: [doc.id] });
    const threadId = (events[0] as Start).threadId;
    let json = "";
    for await (const chunk of exportUserData(u)) json += chunk;
    const exported = JSON.parse(json).attachments.find((a: { id: string }) => a.id === doc.id);
    expect(exported).toMatchObject({ name: "recipe.txt", threadId, text: "Two eggs, one cup of flour." });
    expect(Buffer.from(exported.data, "base64").toString()).toBe("Two eggs, one cup of flour.");

    // Imported into another account (a move to another instance), the files come back on their messages, each read
    // again from its bytes; a file over that instance's limit is refused by name and the rest land.
    const elsewhere = await userContext(
      t.db,
      (await t.db.user.create({ data: { email: `files-moved-${engine}@example.com` } })).id,
    );
    const doctored = JSON.parse(json);
    doctored.attachments.push({
      ...exported,
      id: "huge",
      name: "huge.txt",
      data: Buffer.alloc(3 * 1024 * 1024, 97).toString("base64"),
    });
    const report = await importConversations(elsewhere, [JSON.stringify(doctored)]);
    const files = (await t.db.attachment.findMany({ where: { userId: u.userId, itemId: { not: null } } })).length;
    expect(report.files).toMatchObject({ added: files, refused: { count: 1 } });
    expect(report.files?.refused.reasons[0].reason).toMatch(/“huge.txt” is 3 MB; files are limited to 2 MB/);
    const moved = await t.db.thread.findFirstOrThrow({
      where: { userId: elsewhere.userId, importRef: `mnemo:${threadId}` },
    });
    const view = await threadView(elsewhere, moved.id);
    expect(view.items[0].attachments.map((a) => a.name)).toEqual(["recipe.txt"]);
    const back = await openAttachment(elsewhere, view.items[0].attachments[0].id);
    expect(back.text).toBe("Two eggs, one cup of flour.");
    expect((await searchMessages(elsewhere, { q: "eggs flour" })).hits[0]?.file?.name).toBe("recipe.txt");

    await deleteThread(t.db, u.userId, threadId);
    expect(await t.db.attachment.count({ where: { id: doc.id } })).toBe(0);
  }, 60_000);
});
