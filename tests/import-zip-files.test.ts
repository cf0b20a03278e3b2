// The files a ChatGPT export zip carries beside its conversations come in as the messages' attachments
// (lib/import/zip-assets.ts): current exports' `<file id>.dat` named by `conversation_asset_file_names.json`, older
// exports' `file-<id>-<name>`, before or after conversations.json in the zip; the message's "not imported" note for a
// file goes once the file is attached, and stays for a file the zip lacks; nothing is left in the temporary directory.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { strToU8, zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { pdfOf } from "@/testing/pdf";
import { TINY_PNG } from "@/testing/bad-files";
import { userContext, type UserContext } from "@/lib/user-context";
import { importConversations } from "@/lib/import/run";
import { threadView } from "@/lib/chat/threads";
import { openAttachment } from "@/lib/attachments/store";
import { searchMessages } from "@/lib/chat/search";

/** A ChatGPT conversation of one user message (with these content parts and attachments) and its answer. */
function conversation(id: string, title: string, parts: unknown[], attachments: unknown[]) {
  const at = 1_714_000_000;
  return {
    title,
    create_time: at,
    update_time: at + 60,
    conversation_id: id,
    current_node: `${id}-a`,
    mapping: {
      [`${id}-root`]: { id: `${id}-root`, message: null, parent: null, children: [`${id}-u`] },
      [`${id}-u`]: {
        id: `${id}-u`,
        parent: `${id}-root`,
        children: [`${id}-a`],
        message: {
          id: `${id}-u`,
          author: { role: "user", name: null, metadata: {} },
          create_time: at + 1,
          content: { content_type: parts.length > 1 ? "multimodal_text" : "text", parts },
          status: "finished_successfully",
          metadata: { attachments },
        },
      },
      [`${id}-a`]: {
        id: `${id}-a`,
        parent: `${id}-u`,
        children: [],
        message: {
          id: `${id}-a`,
          author: { role: "assistant", name: null, metadata: {} },
          create_time: at + 2,
          content: { content_type: "text", parts: ["Noted."] },
          status: "finished_successfully",
          metadata: { model_slug: "gpt-4o" },
        },
      },
    },
  };
}

const picture = {
  content_type: "image_asset_pointer",
  asset_pointer: "file-service://file-Pic123",
  width: 1,
  height: 1,
};
const conversations = [
  conversation(
    "c1",
    "Plant and lease",
    [picture, "Is this plant healthy? And see my lease."],
    [
      { id: "file-Pic123", name: "plant.png", mime_type: "image/png", size: TINY_PNG.length },
      { id: "file_00000000abc", name: "lease.pdf", mime_type: "application/pdf", size: 900 },
      { id: "file-Gone1", name: "gone.txt", mime_type: "text/plain", size: 10 },
    ],
  ),
  conversation("c2", "Old notes", ["My notes"], [{ id: "file-Old999", name: "notes.txt", mime_type: "text/plain" }]),
  // A picture named by its image part only: its name comes from the zip's map.
  conversation("c3", "Sunset", [{ ...picture, asset_pointer: "sediment://file_00000000solo" }, "Nice?"], []),
];
const GONE_NOTE = "[File gone.txt not imported: the export has no file contents]";

const importDirs = () => fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith("mnemo-import-"));

describe.each(engines)("files in a ChatGPT export zip on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  const newUser = async (): Promise<UserContext> =>
    userContext(t.db, (await t.db.user.create({ data: { email: `zipfiles-${crypto.randomUUID()}@example.com` } })).id);
  const firstMessage = async (u: UserContext, importRef: string) => {
    const thread = await t.db.thread.findFirstOrThrow({
      where: { userId: u.userId, importRef: `chatgpt:${importRef}` },
    });
    return (await threadView(u, thread.id)).items[0];
  };

  it("come in on the messages that named them, by the export's ids, wherever they sit in the zip", async () => {
    const u = await newUser();
    const before = importDirs();
    const lease = await pdfOf(["Lease of the flat", "The quillwort in the garden belongs to the landlord."]);
    const zip = zipSync({
      // A file before the conversations that name it, one after, and the names map last.
      "file-Pic123.dat": TINY_PNG,
      "conversations.json": strToU8(JSON.stringify(conversations)),
      "file_00000000abc.dat": lease,
      "file-Old999-notes.txt": strToU8("Water the fern on Sundays."),
      "user-abc/file_00000000solo.dat": TINY_PNG,
      "dalle-generations/file-Unnamed1-0a1b.webp": TINY_PNG, // named by no message: left out
      "conversation_asset_file_names.json": strToU8(
        JSON.stringify({
          "file-Pic123.dat": "plant.png",
          "file_00000000abc.dat": "lease.pdf",
          "file_00000000solo.dat": "sunset.png",
        }),
      ),
    });
    const report = await importConversations(u, [zip]);
    expect(report).toMatchObject({ format: "chatgpt", conversations: 3, files: { added: 4, refused: { count: 0 } } });

    const first = await firstMessage(u, "c1");
    expect(first.attachments.map((a) => [a.name, a.kind])).toEqual([
      ["plant.png", "image"],
      ["lease.pdf", "document"],
    ]);
    // The notes for the files that came in are gone; the one for a file the zip lacks stays.
    expect(first.content).toBe(`Is this plant healthy? And see my lease.\n\n${GONE_NOTE}`);
    const pdf = await openAttachment(u, first.attachments[1].id);
    expect(Buffer.compare(pdf.data, lease)).toBe(0);
    expect(pdf.text).toContain("quillwort");
    expect((await searchMessages(u, { q: "quillwort landlord" })).hits[0]?.file).toEqual({
      name: "lease.pdf",
      page: 2,
    });
    const old = await firstMessage(u, "c2");
    expect(old.content).toBe("My notes");
    expect(old.attachments.map((a) => a.name)).toEqual(["notes.txt"]);
    expect((await openAttachment(u, old.attachments[0].id)).text).toBe("Water the fern on Sundays.");
    const sunset = await firstMessage(u, "c3");
    expect([sunset.content, sunset.attachments.map((a) => a.name)]).toEqual(["Nice?", ["sunset.png"]]);
    expect(await t.db.attachment.count({ where: { userId: u.userId } })).toBe(4);
    expect(importDirs()).toEqual(before);

    // Importing the same zip again adds nothing, files included.
    const again = await importConversations(u, [zip]);
    expect(again).toMatchObject({ conversations: 0, duplicates: 3 });
    expect(again.files).toBeUndefined();
    expect(await t.db.attachment.count({ where: { userId: u.userId } })).toBe(4);
  }, 60_000);

  it("conversations.json alone: the messages keep their notes, and no file is made", async () => {
    const u = await newUser();
    const report = await importConversations(u, [JSON.stringify(conversations)]);
    expect(report.files).toBeUndefined();
    const first = await firstMessage(u, "c1");
    expect(first.content).toBe(
      "[image not imported]\n\nIs this plant healthy? And see my lease.\n\n" +
        `[File lease.pdf not imported: the export has no file contents]\n\n${GONE_NOTE}`,
    );
    expect(first.attachments).toEqual([]);
  });

  it("a file the attachment limits refuse is named in the report; the conversation and other files land", async () => {
    const u = await newUser();
    const zip = zipSync({
      "conversations.json": strToU8(JSON.stringify(conversations)),
      "file-Pic123.dat": TINY_PNG,
      "file_00000000abc.dat": strToU8("<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"),
    });
    const report = await importConversations(u, [zip]);
    expect(report).toMatchObject({ conversations: 3, files: { added: 1, refused: { count: 1 } } });
    expect(report.files?.refused.reasons[0].examples).toEqual(["lease.pdf"]);
    const first = await firstMessage(u, "c1");
    expect(first.attachments.map((a) => a.name)).toEqual(["plant.png"]);
    expect(first.content).toContain("[File lease.pdf not imported");
  });
});
