// Where a file's bytes live. By default in its Attachment row (base64, sealed with the user's key): one database,
// on PGlite and PostgreSQL alike. With MNEMO_S3_BUCKET, in S3-compatible object storage (AWS's SDK, any server that
// speaks S3): each object is encrypted with a key of its own (AES-256-GCM), and that key is what the row holds,
// sealed with the user's key. So the bucket alone reads nothing, key rotation re-seals the row and never the object,
// and deleting an account's keys (crypto-shredding) makes its objects unreadable at once. A deleted row's object is
// noted by a trigger (ReleasedObject) and removed by the sweeper once no row names it (an edit's copy shares it).
import crypto from "node:crypto";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { Db } from "@/lib/db/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { getConfig, type S3Config } from "@/lib/config";
import { AppError } from "@/lib/errors";

/** The row's side of a stored file: what goes in `data`, and the object's key when the bytes are elsewhere. */
export type StoredBytes = { data: string; objectKey: string | null };

/** The prefix of `data` (opened) for a file in object storage: the object's own key follows, base64. */
const OBJECT_KEY = "object-key:";

const g = globalThis as typeof globalThis & { __mnemoS3?: { config: S3Config; client: S3Client } };

function s3(): { config: S3Config; client: S3Client } | null {
  const config = getConfig().attachments.s3;
  if (!config) return null;
  if (g.__mnemoS3?.config !== config)
    g.__mnemoS3 = {
      config,
      client: new S3Client({
        region: config.region,
        endpoint: config.endpoint ?? undefined,
        forcePathStyle: config.forcePathStyle,
        credentials: config.credentials ?? undefined,
        // Checksums only where S3 requires them: many S3-compatible servers refuse the SDK's newer defaults.
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      }),
    };
  return g.__mnemoS3;
}

/** Stores a file's bytes: in the row (sealed), or encrypted in a new object whose key the row keeps sealed. */
export async function storeBytes(c: ContentCipher, bytes: Uint8Array): Promise<StoredBytes> {
  const store = s3();
  if (!store) return { data: c.seal(Buffer.from(bytes).toString("base64")), objectKey: null };
  const key = crypto.randomBytes(32);
  const objectKey = `${store.config.prefix}${crypto.randomUUID()}`;
  await store.client
    .send(
      new PutObjectCommand({
        Bucket: store.config.bucket,
        Key: objectKey,
        Body: encrypt(key, bytes),
        ContentType: "application/octet-stream",
      }),
    )
    .catch(unreachable("so the file was not kept"));
  return { data: c.seal(OBJECT_KEY + key.toString("base64")), objectKey };
}

/** Removes the object of a file whose row was never written (its transaction failed): nothing is left behind. */
export async function discardBytes(stored: StoredBytes) {
  const store = s3();
  if (!store || !stored.objectKey) return;
  await store.client
    .send(new DeleteObjectCommand({ Bucket: store.config.bucket, Key: stored.objectKey }))
    .catch((e) => console.error(`[mnemo] object storage: ${(e as Error).message}`));
}

/** A stored file's bytes, read back from wherever they are. */
export async function readBytes(c: ContentCipher, row: StoredBytes): Promise<Buffer> {
  const opened = c.open(row.data);
  if (!row.objectKey) return Buffer.from(opened, "base64");
  const store = s3();
  if (!store) throw new Error("this file is in object storage, and MNEMO_S3_BUCKET is not set");
  if (!opened.startsWith(OBJECT_KEY)) throw new Error("this file's key cannot be read");
  const res = await store.client
    .send(new GetObjectCommand({ Bucket: store.config.bucket, Key: row.objectKey }))
    .catch(unreachable("so the file cannot be read"));
  const body = Buffer.from(await res.Body!.transformToByteArray());
  return decrypt(Buffer.from(opened.slice(OBJECT_KEY.length), "base64"), body);
}

/** Objects per sweep. */
const SWEEP_OBJECTS = 100;

/**
 * Removes the objects of deleted rows that no row names any more (the sweeper's, on every instance: each is claimed
 * by deleting its note in a transaction, so two instances never both remove one).
 */
export async function removeReleasedObjects(db: Db): Promise<number> {
  const store = s3();
  if (!store) return 0;
  const released = await db.releasedObject.findMany({ take: SWEEP_OBJECTS, orderBy: { releasedAt: "asc" } });
  let removed = 0;
  for (const { key } of released) {
    await db.$transaction(async (tx) => {
      const claimed = await tx.releasedObject.deleteMany({ where: { key } });
      if (!claimed.count || (await tx.attachment.count({ where: { objectKey: key } }))) return;
      try {
        await store.client.send(new DeleteObjectCommand({ Bucket: store.config.bucket, Key: key }));
      } catch (e) {
        if (!(e instanceof NoSuchKey)) throw e; // the note comes back with the rollback: tried again next sweep
      }
      removed++;
    });
  }
  return removed;
}

/** An object no row names, older than this, is an orphan: its upload's row was never written (a crash between). */
const ORPHAN_AFTER_MS = 24 * 3_600_000;

/**
 * Removes orphaned objects: stored, but their row never committed (the process died between the two, or the database
 * failed and the object's removal failed too). Objects younger than a day are left alone: their row may be on its way.
 */
export async function removeOrphanObjects(db: Db, now = Date.now()): Promise<number> {
  const store = s3();
  if (!store) return 0;
  let removed = 0;
  let token: string | undefined;
  do {
    const page = await store.client.send(
      new ListObjectsV2Command({ Bucket: store.config.bucket, Prefix: store.config.prefix, ContinuationToken: token }),
    );
    const old = (page.Contents ?? [])
      .filter((o) => o.Key && o.LastModified && now - o.LastModified.getTime() > ORPHAN_AFTER_MS)
      .map((o) => o.Key!);
    const named = new Set(
      old.length
        ? (await db.attachment.findMany({ where: { objectKey: { in: old } }, select: { objectKey: true } })).map(
            (r) => r.objectKey,
          )
        : [],
    );
    for (const key of old.filter((k) => !named.has(k))) {
      await store.client.send(new DeleteObjectCommand({ Bucket: store.config.bucket, Key: key }));
      removed++;
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return removed;
}

/** The storage server failed: logged for the operator, a short true sentence for the user (nothing was stored). */
const unreachable =
  (what: string) =>
  (e: unknown): never => {
    console.error(`[mnemo] object storage: ${(e as Error)?.name}: ${(e as Error)?.message}`);
    throw new AppError(`The file store is not answering just now, ${what}. Try again shortly.`, 503);
  };

function encrypt(key: Buffer, bytes: Uint8Array): Buffer {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(bytes), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function decrypt(key: Buffer, stored: Buffer): Buffer {
  const decipher = crypto.createDecipheriv("aes-256-gcm", key, stored.subarray(0, 12));
  decipher.setAuthTag(stored.subarray(12, 28));
  return Buffer.concat([decipher.update(stored.subarray(28)), decipher.final()]);
}
