// "Export my data": everything that belongs to the user, as one JSON document
// produced piece by piece (rows are read in pages and written one per line), so
// a large account never sits in memory. Format documented in docs/export.md.
import type { Db } from "@/lib/db/client";
import { type UserContext } from "@/lib/user-context";
import { openJson, type ContentCipher } from "@/lib/crypto/content";
import { Prisma } from "@/lib/generated/prisma/client";
import { USER_DATA, tableSql, userKeySql, userRowsSql } from "./user-data";
import { readBytes } from "@/lib/attachments/file-store";
import { contributionsOf, historyNaming, invitesOf } from "@/lib/projects/contributions";

export const EXPORT_FORMAT = "mnemo-export";
export const EXPORT_VERSION = 1;
const PAGE = 500;
/** Attachments per read: each carries its file. */
const FILES_PAGE = 4;

const line = (v: unknown) => JSON.stringify(v);

/** How many rows the export will hold (for a progress bar). */
export async function exportRowCount(db: Db, userId: string): Promise<number> {
  const counts = Object.entries(USER_DATA)
    .filter(([, e]) => e.rows)
    .map(([table]) => Prisma.sql`(SELECT count(*) FROM ${tableSql(table)} WHERE ${userRowsSql(table, userId)})`);
  const [r] = await db.$queryRaw<Array<{ n: number }>>`SELECT (${Prisma.join(counts, " + ")})::int AS n`;
  return r.n;
}

async function* array<T>(name: string, pages: AsyncGenerator<T[]>, first = false): AsyncGenerator<string> {
  yield `${first ? "" : ",\n"}${JSON.stringify(name)}: [`;
  let any = false;
  for await (const page of pages) {
    for (const row of page) {
      yield `${any ? "," : ""}\n${line(row)}`;
      any = true;
    }
  }
  yield any ? "\n]" : "]";
}

async function* paged<T extends { id: string }>(
  fetch: (after: string | undefined) => Promise<T[]>,
): AsyncGenerator<T[]> {
  let after: string | undefined;
  for (;;) {
    const rows = await fetch(after);
    if (!rows.length) return;
    yield rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1].id;
  }
}

const openOrNull = (c: ContentCipher, v: string | null) => (v === null ? null : c.open(v));

/** The export, as chunks of one JSON document. */
export async function* exportUserData(u: UserContext, now = new Date()): AsyncGenerator<string> {
  const { db, userId } = u;
  const user = await db.user.findUnique({ where: { id: userId } });
  if (!user) return;
  const c = u.cipher;
  const rowsOf = (table: string) => userRowsSql(table, userId);

  yield `{\n"format": ${line(EXPORT_FORMAT)},\n"version": ${EXPORT_VERSION},\n"exportedAt": ${line(now.toISOString())},\n`;
  yield `"profile": ${line({ id: user.id, name: user.name, email: user.email, emailVerified: user.emailVerified, image: user.image, role: user.role, disabled: user.disabled, hasPassword: !!user.passwordHash, createdAt: user.createdAt, updatedAt: user.updatedAt })},\n`;
  yield `"settings": ${line({ memoryPaused: user.memoryPaused, memoryReview: user.memoryReview, memoryResetAt: user.memoryResetAt })},\n`;
  yield `"aboutYou": ${line({ summary: openOrNull(c, user.aboutSummary), writtenAt: user.aboutSummaryAt, byYou: user.aboutSummaryEdited })},\n`;
  yield* array(
    "accounts",
    (async function* () {
      yield (
        await db.account.findMany({
          where: { userId },
          select: { provider: true, providerAccountId: true, type: true, scope: true, createdAt: true },
        })
      ).map((a) => ({
        key: `${a.provider}:${a.providerAccountId}`,
        ...a,
      }));
    })(),
    true,
  );
  yield* array(
    "sessions",
    (async function* () {
      yield await db.$queryRaw<
        unknown[]
      >`SELECT ${userKeySql("Session")} AS "tokenSha256", expires, "createdAt" FROM "Session" WHERE ${rowsOf("Session")}`;
    })(),
  );
  yield* array(
    "signedOutSessions",
    (async function* () {
      yield await db.signedOutSession.findMany({ where: { userId }, select: { sid: true, expiresAt: true } });
    })(),
  );
  yield* array(
    "deletedMessageIds",
    (async function* () {
      // Messages deleted in the last hour, by id only: app instances drop their vectors (lib/memory/kept-vectors.ts).
      yield await db.$queryRaw<
        unknown[]
      >`SELECT ${userKeySql("ItemVectorGone")} AS key, "itemId", at FROM "ItemVectorGone" WHERE ${rowsOf("ItemVectorGone")}`;
    })(),
  );
  yield* array(
    "memoryChanges",
    (async function* () {
      // The transaction that last changed the user's searchable memories (lib/memory/kept-memory-vectors.ts); no text.
      yield await db.$queryRaw<
        unknown[]
      >`SELECT ${userKeySql("MemoryVectorState")} AS key, "lastChange"::text AS "lastChange" FROM "MemoryVectorState" WHERE ${rowsOf("MemoryVectorState")}`;
    })(),
  );
  yield* array(
    "verificationTokens",
    (async function* () {
      yield await db.$queryRaw<
        unknown[]
      >`SELECT identifier, ${userKeySql("VerificationToken")} AS "tokenSha256", expires FROM "VerificationToken" WHERE ${rowsOf("VerificationToken")}`;
    })(),
  );
  yield* array(
    "rateLimits",
    (async function* () {
      yield await db.$queryRaw<
        unknown[]
      >`SELECT key, points, expire FROM "RateLimiterFlexible" WHERE ${rowsOf("RateLimiterFlexible")}`;
    })(),
  );
  yield* array(
    "encryptionKeys",
    (async function* () {
      // Which keys exist, never the key material.
      yield (
        await db.userKey.findMany({ where: { userId }, select: { version: true, masterKeyId: true, createdAt: true } })
      ).map((k) => ({ key: `${userId}:${k.version}`, ...k }));
    })(),
  );

  yield* array(
    "projects",
    (async function* () {
      // Threads and memories name their project by id (projectId).
      const rows = await db.project.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
      yield rows.map((p) => ({ ...p, name: c.open(p.name), instructions: c.open(p.instructions) }));
    })(),
  );

  yield* array(
    "sharedProjects",
    (async function* () {
      // Shared projects the user is in, with the chats they started and the memories they taught there, marked
      // "contributed": those rows are the project's, sealed under its key (lib/projects/access.ts).
      yield await contributionsOf(u);
    })(),
  );
  yield* array(
    "sharedProjectHistory",
    (async function* () {
      yield await historyNaming(u);
    })(),
  );
  yield* array(
    "sharedProjectInvites",
    (async function* () {
      yield await invitesOf(u);
    })(),
  );

  yield* array(
    "apiKeys",
    (async function* () {
      // Which keys exist and what they may do; never the key's hash.
      const rows = await db.apiKey.findMany({ where: { userId }, orderBy: { createdAt: "asc" }, omit: { hash: true } });
      yield rows.map((k) => ({ ...k, name: c.open(k.name) }));
    })(),
  );

  // Threads, each followed by its items (every branch) and summaries.
  yield ',\n"threads": [';
  let firstThread = true;
  for await (const threads of paged((after) =>
    db.thread.findMany({
      where: { userId, ...(after ? { id: { gt: after } } : {}) },
      orderBy: { id: "asc" },
      take: PAGE,
      omit: { appendParentId: true },
    }),
  )) {
    for (const t of threads) {
      yield `${firstThread ? "" : ","}\n{"thread": ${line({ ...t, title: openOrNull(c, t.title) })},\n`;
      firstThread = false;
      yield* array(
        "items",
        paged((after) =>
          db.item
            .findMany({
              where: { threadId: t.id, ...(after ? { id: { gt: after } } : {}) },
              orderBy: { id: "asc" },
              take: PAGE,
              omit: { searchTokens: true },
            })
            .then((rows) =>
              rows.map((i) => ({ ...i, content: c.open(i.content), toolCalls: openJson(c, i.toolCalls as never) })),
            ),
        ),
        true,
      );
      yield* array(
        "summaries",
        (async function* () {
          yield (await db.summary.findMany({ where: { threadId: t.id }, orderBy: { version: "asc" } })).map((s) => ({
            ...s,
            content: c.open(s.content),
          }));
        })(),
      );
      yield "}";
    }
  }
  yield "\n]";

  // Attachments with their files (base64), a few at a time: a file may be megabytes.
  yield* array(
    "attachments",
    (async function* () {
      let after: string | undefined;
      for (;;) {
        const rows = await db.attachment.findMany({
          where: { userId, ...(after ? { id: { gt: after } } : {}) },
          orderBy: { id: "asc" },
          take: FILES_PAGE,
        });
        if (!rows.length) return;
        const files = [];
        for (const a of rows) {
          const data = (await readBytes(c, a)).toString("base64");
          files.push({ ...a, name: c.open(a.name), data, text: openOrNull(c, a.text) });
        }
        yield files;
        if (rows.length < FILES_PAGE) return;
        after = rows[rows.length - 1].id;
      }
    })(),
  );

  yield* array(
    "memories",
    paged((after) =>
      db.memory
        .findMany({
          where: { userId, ...(after ? { id: { gt: after } } : {}) },
          orderBy: { id: "asc" },
          take: PAGE,
          omit: { searchTokens: true },
          include: { versions: { orderBy: { createdAt: "asc" } } },
        })
        .then((rows) =>
          rows.map((m) => ({
            ...m,
            text: c.open(m.text),
            steps: openJson(c, m.steps as never),
            versions: m.versions.map((v) => ({
              ...v,
              oldText: openOrNull(c, v.oldText),
              newText: openOrNull(c, v.newText),
            })),
          })),
        ),
    ),
  );
  yield* array(
    "memoryUses",
    (async function* () {
      let after: string | undefined;
      for (;;) {
        const rows = await db.memoryUse.findMany({
          where: { userId, ...(after ? { itemId: { gt: after } } : {}) },
          orderBy: [{ itemId: "asc" }, { memoryId: "asc" }],
          take: PAGE * 4,
        });
        // Page on whole items so no (item, memory) pair is skipped.
        const cut = rows.length === PAGE * 4 ? rows.filter((r) => r.itemId !== rows[rows.length - 1].itemId) : rows;
        yield cut.map((u) => ({ key: `${u.itemId}:${u.memoryId}`, ...u }));
        if (rows.length < PAGE * 4 || !cut.length) return;
        after = cut[cut.length - 1].itemId;
      }
    })(),
  );
  yield* array(
    "memorySends",
    (async function* () {
      // What left the box: which memories went to which model server, when, through which client.
      const rows = await db.memorySend.findMany({ where: { userId }, orderBy: { at: "asc" } });
      yield rows.map((s) => ({ ...s, model: c.open(s.model), endpoint: c.open(s.endpoint) }));
    })(),
  );
  yield* array(
    "feedback",
    (async function* () {
      // Ratings and corrections of answers, comments readable.
      const rows = await db.feedback.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
      yield rows.map((f) => ({ ...f, comment: openOrNull(c, f.comment) }));
    })(),
  );
  yield* array(
    "jobs",
    (async function* () {
      // Background work queued for the user's answers: kinds, ids and states, no text.
      yield await db.job.findMany({
        where: { userId },
        orderBy: { createdAt: "asc" },
        select: {
          id: true,
          kind: true,
          payload: true,
          status: true,
          attempts: true,
          createdAt: true,
          finishedAt: true,
        },
      });
    })(),
  );
  yield* array(
    "audit",
    (async function* () {
      yield await db.auditLog.findMany({
        where: { OR: [{ subjectUserId: userId }, { actorId: userId }] },
        orderBy: { at: "asc" },
      });
    })(),
  );
  const usage = await db.$queryRaw<
    { model: string | null; promptTokens: number; completionTokens: number; answers: number }[]
  >`SELECT i.model, COALESCE(sum(i."promptTokens"), 0)::int AS "promptTokens", COALESCE(sum(i."completionTokens"), 0)::int AS "completionTokens",
            count(*)::int AS answers
     FROM "Item" i WHERE ${rowsOf("Item")} AND i.role = 'assistant' GROUP BY i.model ORDER BY 1`;
  const ledger = await db.usageDay.findMany({ where: { userId }, orderBy: { day: "asc" } });
  const days = ledger.map((d) => ({ key: `${d.userId}:${d.day.toISOString().slice(0, 10)}`, ...d }));
  yield `,\n"usage": ${line({ byModel: usage, byDay: days })}\n}\n`;
}
