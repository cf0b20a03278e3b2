// Files in S3-compatible object storage (lib/attachments/file-store.ts), against s3rver (an S3 server speaking the
// real protocol, on disk) through AWS's SDK: the bytes go to the bucket encrypted with a key only the row holds
// (sealed with the user's key); they read back whole for the owner, the export and a turn's pictures; an edit's copy
// shares the object, which is removed only when no row names it; deleting the account removes its objects; an
// object whose row never committed is removed after a day; a store that does not answer gets a clear error and leaves
// no row.
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import S3rver from "s3rver";
import { CreateBucketCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Read once by lib/config.ts, so set before anything loads it. A port the kernel gives as free: one picked from the
// process id fell in the range outgoing connections use, and CI once found it taken (EADDRINUSE, the hook hung).
const PORT = await new Promise<number>((resolve, reject) => {
  const probe = net.createServer().once("error", reject);
  probe.listen(0, "127.0.0.1", () => {
    const { port } = probe.address() as net.AddressInfo;
    probe.close(() => resolve(port));
  });
});
const BUCKET = "mnemo-files";
Object.assign(process.env, {
  MNEMO_S3_BUCKET: BUCKET,
  MNEMO_S3_ENDPOINT: `http://127.0.0.1:${PORT}`,
  MNEMO_S3_ACCESS_KEY_ID: "S3RVER",
  MNEMO_S3_SECRET_ACCESS_KEY: "S3RVER",
  MNEMO_S3_PREFIX: "test/",
});

const { createTestDb, engines } = await import("@/testing/databases");
const { pdfOf } = await import("@/testing/pdf");
const { userContext } = await import("@/lib/user-context");
const { forgetCachedKeys, setEncryptionKeys } = await import("@/lib/crypto/content");
const { rotateKeys } = await import("@/lib/crypto/rotate");
const { saveUpload, openAttachment, bindToMessage, copyAttachments } = await import("@/lib/attachments/store");
const { removeOrphanObjects, removeReleasedObjects } = await import("@/lib/attachments/file-store");
const { appendItems } = await import("@/lib/memory/session");
const { exportUserData } = await import("@/lib/account/export");
const { deleteThread } = await import("@/lib/chat/threads");
const { deleteAccount } = await import("@/lib/account/delete");

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "s3rver-"));
let server: S3rver | null = null;
const startServer = async () => {
  server = new S3rver({ port: PORT, address: "127.0.0.1", silent: true, directory: dir });
  await server.run();
};
const raw = new S3Client({
  endpoint: `http://127.0.0.1:${PORT}`,
  region: "us-east-1",
  forcePathStyle: true,
  credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
});
/** The object as the bucket holds it, or null when it is gone. */
async function object(key: string): Promise<Buffer | null> {
  try {
    const r = await raw.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  } catch (e) {
    if (e instanceof NoSuchKey) return null;
    throw e;
  }
}

beforeAll(async () => {
  await startServer();
  await raw.send(new CreateBucketCommand({ Bucket: BUCKET }));
  setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
});
afterAll(async () => {
  setEncryptionKeys(undefined);
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(engines)("attachments in object storage on %s", (engine) => {
  let t: Awaited<ReturnType<typeof createTestDb>>;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  const newUser = async () =>
    userContext(
      t.db,
      (await t.db.user.create({ data: { email: `s3-${engine}-${crypto.randomUUID()}@example.com` } })).id,
    );

  it("keeps the bytes in the bucket, unreadable there, and reads them back whole", async () => {
    const u = await newUser();
    const pdf = await pdfOf(["Tenancy agreement", "The deposit is 900 euros."]);
    const meta = await saveUpload(u, "lease.pdf", pdf);
    const row = await t.db.attachment.findUniqueOrThrow({ where: { id: meta.id } });
    expect(row.objectKey).toMatch(/^test\/[0-9a-f-]{36}$/);
    expect(row.data.length).toBeLessThan(200); // the object's key, sealed: not the file
    const stored = await object(row.objectKey!);
    expect(stored!.length).toBe(pdf.length + 28); // the file, encrypted (IV and tag)
    expect(stored!.includes(Buffer.from("%PDF"))).toBe(false);
    const opened = await openAttachment(u, meta.id);
    expect(Buffer.compare(opened.data, pdf)).toBe(0);
    expect(opened.text).toContain("The deposit is 900 euros.");
    let json = "";
    for await (const chunk of exportUserData(u)) json += chunk;
    const exported = JSON.parse(json).attachments.find((a: { id: string }) => a.id === meta.id);
    expect(Buffer.compare(Buffer.from(exported.data, "base64"), pdf)).toBe(0);

    // A new data key re-seals the row's key for the object; the object itself is untouched and still reads.
    await rotateKeys(t.db, { dataKeys: true });
    forgetCachedKeys();
    expect((await t.db.attachment.findUniqueOrThrow({ where: { id: meta.id } })).data).not.toBe(row.data);
    expect(Buffer.compare((await object(row.objectKey!))!, stored!)).toBe(0);
    const again = await openAttachment(await userContext(t.db, u.userId), meta.id);
    expect(Buffer.compare(again.data, pdf)).toBe(0);
  });

  it("an edit's copy shares the object: it goes when the last row naming it goes, and with the account", async () => {
    const u = await newUser();
    const th = await t.db.thread.create({ data: { userId: u.userId } });
    const [a, b] = await appendItems(
      t.db,
      th.id,
      [
        { role: "user", content: "first" },
        { role: "user", content: "edited" },
      ],
      { cipher: u.cipher },
    );
    const meta = await saveUpload(u, "notes.txt", Buffer.from("Water the fern."));
    await bindToMessage(t.db, u.userId, [meta.id], th.id, a.id);
    await copyAttachments(t.db, u.userId, a.id, b.id);
    const key = (await t.db.attachment.findUniqueOrThrow({ where: { id: meta.id } })).objectKey!;

    await t.db.attachment.delete({ where: { id: meta.id } }); // one row goes; the copy still names the object
    expect(await removeReleasedObjects(t.db)).toBe(0);
    expect(await object(key)).not.toBeNull();
    const copy = await t.db.attachment.findFirstOrThrow({ where: { itemId: b.id } });
    expect((await openAttachment(u, copy.id)).data.toString()).toBe("Water the fern.");

    await deleteThread(t.db, u.userId, th.id);
    expect(await removeReleasedObjects(t.db)).toBe(1);
    expect(await object(key)).toBeNull();

    // Deleting the account: its files' objects go too.
    const other = await newUser();
    const kept = await saveUpload(other, "cv.txt", Buffer.from("Ten years of carpentry."));
    const otherKey = (await t.db.attachment.findUniqueOrThrow({ where: { id: kept.id } })).objectKey!;
    await deleteAccount(t.db, other.userId, { actorId: other.userId });
    expect(await removeReleasedObjects(t.db)).toBe(1);
    expect(await object(otherKey)).toBeNull();
    expect(await t.db.releasedObject.count()).toBe(0);
  });

  it("an object whose row was never written (a crash between the two) is removed after a day, and only then", async () => {
    const u = await newUser();
    const kept = await saveUpload(u, "kept.txt", Buffer.from("still here"));
    const keptKey = (await t.db.attachment.findUniqueOrThrow({ where: { id: kept.id } })).objectKey!;
    // An upload's object, its row never committed: the process died in between.
    const orphan = `test/${crypto.randomUUID()}`;
    await raw.send(new PutObjectCommand({ Bucket: BUCKET, Key: orphan, Body: Buffer.from("sealed bytes") }));
    expect(await removeOrphanObjects(t.db)).toBe(0); // too young: its row may be on its way
    expect(await object(orphan)).not.toBeNull();
    const dayLater = Date.now() + 25 * 3_600_000;
    expect(await removeOrphanObjects(t.db, dayLater)).toBeGreaterThanOrEqual(1);
    expect(await object(orphan)).toBeNull();
    expect((await object(keptKey))?.length).toBeGreaterThan(0); // a row names it
    expect((await openAttachment(u, kept.id)).data.toString()).toBe("still here");
  });

  it("a store that does not answer: a clear error, no row, and the file can be sent again once it is back", async () => {
    const u = await newUser();
    await server!.close();
    try {
      await expect(saveUpload(u, "photo.txt", Buffer.from("hello"))).rejects.toMatchObject({
        status: 503,
        message: expect.stringMatching(/The file store is not answering just now, so the file was not kept/),
      });
      expect(await t.db.attachment.count({ where: { userId: u.userId } })).toBe(0);
    } finally {
      await startServer();
    }
    const meta = await saveUpload(u, "photo.txt", Buffer.from("hello"));
    expect((await openAttachment(u, meta.id)).data.toString()).toBe("hello");
  });
});
