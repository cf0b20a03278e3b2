// The data-rights checks, on a real database: seed two users with data in every
// table (encryption at rest on), then check
//  - plaintext_hits: no raw column anywhere holds a known message, title,
//    summary, tool argument, memory, procedure step, feedback comment or merge
//    of theirs, including a third user's rows written before encryption was on
//    and sealed by key rotation;
//  - rotation_unreadable: after `keys:rotate -- --data-keys`, every sealed
//    column (lib/crypto/sealed-columns.ts) of every user still reads back;
//  - unaudited_admin_reads: every admin read of a thread or memories wrote an
//    audit row, and with admin access off nothing is read;
//  - export_missing_rows: every row of the user in every table is in the export;
//  - rows_left_after_delete: after deleting the account no row anywhere holds
//    the user's id or email, the other user's rows are untouched, and the
//    deleted user's ciphertext can no longer be opened (crypto-shredding).
// Used by tests/privacy.test.ts and scripts/check-privacy.ts.
import { bindToMessage, saveUpload } from "@/lib/attachments/store";
import { AdminAccessDisabledError } from "@/lib/errors";
import { threadCipher } from "@/testing/ciphers";
import { userContext } from "@/lib/user-context";
import { rateAnswer } from "@/lib/memory/feedback";
import crypto from "node:crypto";
import type { Db } from "@/lib/db/client";
import { LIST_TABLES_SQL, USER_DATA, tableSql, userKeySql, userRowsSql } from "@/lib/account/user-data";
import { Prisma } from "@/lib/generated/prisma/client";
import { saveAbout } from "@/lib/memory/about";
import { exportUserData } from "@/lib/account/export";
import { deleteAccount } from "@/lib/account/delete";
import { cipherFor, forgetCachedKeys, isSealed, setEncryptionKeys } from "@/lib/crypto/content";
import { createThread } from "@/lib/chat/threads";
import { createProject } from "@/lib/projects/projects";
import { inviteMember, createSharedProject } from "@/lib/projects/members";
import { projectAccess } from "@/lib/projects/access";
import { createApiKey } from "@/lib/keys/api-keys";
import { recordSend } from "@/lib/memory/disclosure";
import { exactScope } from "@/lib/projects/scope";
import { saveSummary } from "@/lib/chat/summaries";
import { appendItems } from "@/lib/memory/session";
import { addMemory, retireMemory, updateMemoryText } from "@/lib/memory/store";
import { rotateKeys } from "@/lib/crypto/rotate";
import { recordUsage } from "@/lib/account/usage-ledger";
import { UNREADABLE } from "@/lib/crypto/content";
import { reviewMemories, reviewThread, setAdminAccessForTests } from "@/lib/admin/review";

export type PrivacyReport = {
  tables_checked: number;
  rows_left_after_delete: number;
  export_missing_rows: number;
  plaintext_hits: number;
  unaudited_admin_reads: number;
  unmapped_tables: string[];
  other_user_rows_changed: number;
  shredded_still_readable: number;
  rotation_unreadable: number;
  details: string[];
};

type Seeded = { id: string; email: string; markers: string[]; threadId: string };

async function seedUser(db: Db, name: string): Promise<Seeded> {
  const tag = `${name}-${crypto.randomBytes(4).toString("hex")}`;
  const m = (what: string) => `zq${what}${tag.replace(/[^a-z0-9]/g, "")}`;
  const markers = [
    m("title"),
    m("question"),
    m("answer"),
    m("toolarg"),
    m("branch"),
    m("summary"),
    m("memory"),
    m("memoryedit"),
    m("feedback"),
    m("merged"),
    m("step"),
    m("about"),
    m("project"),
    m("instructions"),
    m("apikey"),
    m("sentto"),
    m("file"),
    m("sharedname"),
    m("sharedchat"),
    m("sharedmemory"),
    m("sharedfile"),
  ];
  const [
    title,
    question,
    answer,
    toolarg,
    branch,
    summary,
    memory,
    memoryEdit,
    feedback,
    merged,
    step,
    about,
    projectName,
    instructions,
    keyName,
    sentTo,
    fileWord,
    sharedName,
    sharedChat,
    sharedMemory,
    sharedFile,
  ] = markers;
  const user = await db.user.create({
    data: { email: `${tag}@example.com`, name, passwordHash: "scrypt$placeholder" },
  });
  const thread = await createThread(await userContext(db, user.id), { title: `About ${title}` });
  const [q, a] = await appendItems(
    db,
    thread.id,
    [
      { role: "user", content: `My secret word is ${question}.` },
      {
        role: "assistant",
        content: `Noted: ${answer}.`,
        toolCalls: [{ id: "call_1", name: "remember", arguments: JSON.stringify({ text: toolarg }) }],
        promptTokens: 12,
        completionTokens: 5,
        model: "m",
      },
      { role: "tool", content: `{"saved":"${toolarg}"}`, toolCallId: "call_1", toolName: "remember" },
    ],
    { cipher: await threadCipher(db, thread.id) },
  );
  await appendItems(db, thread.id, [{ role: "user", content: `Edited: ${branch}` }], {
    cipher: await threadCipher(db, thread.id),
    parent: null,
  });
  await saveSummary(await userContext(db, user.id), thread.id, a, `The user said ${summary}.`, "m");
  // A message with a vector, deleted: its id waits in ItemVectorGone for the instances that keep vectors.
  const undone = await db.item.create({
    data: { threadId: thread.id, userId: user.id, position: 1_000, role: "user", embeddingModel: "m" },
  });
  await db.item.delete({ where: { id: undone.id } });
  // A file sent with the question: its name, its bytes and its text are the user's.
  const file = await saveUpload(await userContext(db, user.id), `${fileWord}.txt`, Buffer.from(`Notes ${fileWord}`));
  await bindToMessage(db, user.id, [file.id], thread.id, q.id);
  const mem = await addMemory(
    await userContext(db, user.id),
    { text: `Likes ${memory}`, source: "explicit", sourceThreadId: thread.id, sourceItemId: q.id },
    "user",
    "test",
  );
  await updateMemoryText(await userContext(db, user.id), mem.id, `Likes ${memoryEdit}`, {
    actor: "user",
    source: "manual",
    reason: "edit",
  });
  // A merge names the memory that stays: its words must not land in the version's reason.
  const twin = await addMemory(
    await userContext(db, user.id),
    { text: `Also likes ${merged}`, source: "inferred" },
    "model",
    "test",
  );
  await retireMemory(db, user.id, mem.id, twin.id, "Merged into a memory that says the same");
  await addMemory(
    await userContext(db, user.id),
    { text: `Brew tea: 1. boil water 2. ${step}`, kind: "procedure", source: "explicit", steps: ["boil water", step] },
    "user",
    "test",
  );
  await db.memoryUse.create({ data: { itemId: a.id, memoryId: mem.id, userId: user.id } });
  await recordUsage(db, user.id, { turns: 1, modelCalls: 2, embeddingCalls: 1, tokens: 17 });
  await rateAnswer(await userContext(db, user.id), { itemId: a.id, rating: -1, comment: `Too long, ${feedback}` });
  await db.account.create({ data: { userId: user.id, type: "oidc", provider: "test", providerAccountId: tag } });
  await db.session.create({
    data: { userId: user.id, sessionToken: `tok-${tag}`, expires: new Date(Date.now() + 3_600_000) },
  });
  await db.verificationToken.create({
    data: { identifier: user.email, token: `vt-${tag}`, expires: new Date(Date.now() + 3_600_000) },
  });
  await db.rateLimiterFlexible.create({ data: { key: `signin-email:${user.email}`, points: 1 } });
  await db.signedOutSession.create({
    data: { sid: `sid-${tag}`, userId: user.id, expiresAt: new Date(Date.now() + 3_600_000) },
  });
  await db.job.create({
    data: { kind: "title", userId: user.id, payload: { threadId: thread.id }, dedupeKey: `seed-${tag}` },
  });
  // A project (its name and instructions are the user's words), a thread in it and what it learned.
  const project = await createProject(await userContext(db, user.id), {
    name: `Project ${projectName}`,
    instructions: `Write like ${instructions}`,
  });
  await createThread(await userContext(db, user.id), { title: "In the project", projectId: project.id });
  await addMemory(
    await userContext(db, user.id, exactScope(project.id)),
    { text: "Writes in the mornings", source: "explicit" },
    "user",
    "test",
  );
  // What left the box: one request that carried the memory.
  await recordSend(db, (await userContext(db, user.id)).cipher, {
    userId: user.id,
    memoryIds: [mem.id],
    model: `model-${sentTo}`,
    baseURL: "http://127.0.0.1:9/v1",
    client: "web",
  });
  // A personal API key, named by the user.
  await createApiKey(await userContext(db, user.id), { name: `Key ${keyName}`, scopes: ["chat"] });
  // "What Mnemo knows about you", in the user's words.
  await saveAbout(await userContext(db, user.id), `You keep ${about} in the garden.`);
  await seedSharedProject(db, user.id, { sharedName, sharedChat, sharedMemory, sharedFile });
  return { id: user.id, email: user.email, markers, threadId: thread.id };
}

/**
 * A shared project the user owns: its name, a chat they started with a file and a memory they taught, sealed under the
 * project's own key (lib/projects/access.ts). Deleting the account deletes the project with its account and key
 * (nobody else is in it): tests/shared-projects.test.ts covers a project that passes to another member.
 */
async function seedSharedProject(db: Db, userId: string, words: Record<string, string>) {
  const me = await userContext(db, userId);
  const { id } = await createSharedProject(me, { name: `Shared ${words.sharedName}` });
  const { content } = await projectAccess(me, id, "write");
  const chat = await createThread(content, { title: "Shared chat", projectId: id });
  const [q] = await appendItems(db, chat.id, [{ role: "user", content: `In the shared project ${words.sharedChat}` }], {
    cipher: content.cipher,
  });
  const file = await saveUpload(content, "team.txt", Buffer.from(`The team's file ${words.sharedFile}`));
  await bindToMessage(db, content.userId, [file.id], chat.id, q.id, userId);
  await addMemory(content, { text: `The team likes ${words.sharedMemory}`, source: "manual" }, "user", "test");
  // An invitation waiting for an address without an account.
  await inviteMember(await projectAccess(me, id, "own"), {
    email: `friend-${crypto.randomBytes(4).toString("hex")}@example.com`,
    role: "viewer",
  });
}

export async function tables(db: Db): Promise<string[]> {
  return (await db.$queryRaw<Array<{ name: string }>>(LIST_TABLES_SQL)).map((r) => r.name);
}

/** Rows in `table` where any column, as text, contains `needle` (case-insensitive). */
export async function rowsContaining(db: Db, table: string, needle: string): Promise<number> {
  const [r] = await db.$queryRaw<Array<{ n: number }>>`
    SELECT count(*)::int AS n FROM ${Prisma.raw(`"${table.replaceAll('"', '""')}"`)} x
    WHERE strpos(lower(row_to_json(x)::text), lower(${needle})) > 0
  `;
  return r.n;
}

async function userRowCounts(db: Db, userId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [table, e] of Object.entries(USER_DATA)) {
    if (!e.rows) continue;
    const [r] = await db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM ${tableSql(table)} WHERE ${userRowsSql(table, userId)}
    `;
    out[table] = r.n;
  }
  return out;
}

export async function collectExport(db: Db, userId: string): Promise<string> {
  let s = "";
  for await (const chunk of exportUserData(await userContext(db, userId))) s += chunk;
  return s;
}

export async function runPrivacyChecks(db: Db): Promise<PrivacyReport> {
  const details: string[] = [];
  const report: PrivacyReport = {
    tables_checked: 0,
    rows_left_after_delete: 0,
    export_missing_rows: 0,
    plaintext_hits: 0,
    unaudited_admin_reads: 0,
    unmapped_tables: [],
    other_user_rows_changed: 0,
    shredded_still_readable: 0,
    rotation_unreadable: 0,
    details,
  };
  // Carol's rows are written before encryption is turned on: rotation must seal every one of them.
  setEncryptionKeys(undefined);
  const carol = await seedUser(db, "carol");
  setEncryptionKeys({ key: crypto.randomBytes(32).toString("base64") });
  try {
    const all = await tables(db);
    report.tables_checked = all.length;
    report.unmapped_tables = all.filter((t) => !(t in USER_DATA));
    for (const t of report.unmapped_tables) details.push(`table "${t}" has no entry in lib/account/user-data.ts`);

    const admin = await db.user.create({
      data: { email: `admin-${crypto.randomBytes(4).toString("hex")}@example.com`, role: "ADMIN" },
    });
    const alice = await seedUser(db, "alice");
    const bob = await seedUser(db, "bob");
    // Every user's rows under a new data key (and carol's sealed for the first time).
    await rotateKeys(db, { dataKeys: true });
    forgetCachedKeys();
    for (const u of [alice, bob, carol]) {
      const text = await collectExport(db, u.id);
      const lost = u.markers.filter((m) => !text.includes(m)).length + text.split(UNREADABLE).length - 1;
      if (lost) details.push(`after key rotation ${lost} value(s) of ${u.email} no longer read back`);
      report.rotation_unreadable += lost;
    }

    // 1. No plaintext at rest.
    for (const u of [alice, bob, carol]) {
      for (const marker of u.markers) {
        for (const t of all) {
          const n = await rowsContaining(db, t, marker);
          if (n) details.push(`plaintext "${marker}" found in ${n} row(s) of "${t}"`);
          report.plaintext_hits += n;
        }
      }
    }

    // 2. Admin reads are audited; with access off there are none.
    const before = await db.auditLog.count({
      where: { actorId: admin.id, action: { in: ["thread.view", "memory.view"] } },
    });
    let reads = 0;
    const view = await reviewThread(db, admin.id, alice.threadId, "Abuse report #12");
    if (view.items.length) reads++;
    if ((await reviewMemories(db, admin.id, alice.id, "Abuse report #12")).length) reads++;
    setAdminAccessForTests(false);
    try {
      await reviewThread(db, admin.id, bob.threadId, "Should be refused");
      reads++;
      details.push("admin read a thread while admin access was off");
    } catch (e) {
      if (!(e instanceof AdminAccessDisabledError)) throw e;
    } finally {
      setAdminAccessForTests(undefined);
    }
    const audited =
      (await db.auditLog.count({ where: { actorId: admin.id, action: { in: ["thread.view", "memory.view"] } } })) -
      before;
    report.unaudited_admin_reads = Math.max(0, reads - audited);
    if (!view.items.some((i) => i.content.includes(alice.markers[4])))
      details.push("admin review did not show the decrypted thread");

    // 3. The export holds every row of the user (by key) and the readable text.
    const text = await collectExport(db, alice.id);
    const parsed = JSON.parse(text) as { format: string; version: number };
    if (parsed.format !== "mnemo-export" || parsed.version !== 1) details.push("export has the wrong format/version");
    for (const [table, e] of Object.entries(USER_DATA)) {
      if (!e.rows) continue;
      const keys = await db.$queryRaw<Array<{ k: string }>>`
        SELECT (${userKeySql(table)})::text AS k FROM ${tableSql(table)} WHERE ${userRowsSql(table, alice.id)}
      `;
      if (!keys.length && table !== "VerificationToken")
        details.push(`seed made no "${table}" row (the export check would be empty)`);
      for (const { k } of keys) {
        if (!text.includes(JSON.stringify(k))) {
          report.export_missing_rows++;
          details.push(`export lacks ${table} row ${k}`);
        }
      }
    }
    for (const marker of alice.markers)
      if (!text.includes(marker)) details.push(`export lacks the readable text "${marker}"`);

    // 4. Deletion: nothing of alice's left anywhere; bob untouched; alice's ciphertext unreadable.
    const bobBefore = await userRowCounts(db, bob.id);
    const backup = await db.item.findMany({ where: { threadId: alice.threadId }, select: { content: true } });
    await deleteAccount(db, alice.id, { actorId: alice.id });
    forgetCachedKeys();
    for (const t of all) {
      for (const needle of [alice.id, alice.email]) {
        const n = await rowsContaining(db, t, needle);
        if (n)
          details.push(
            `after deletion, "${t}" has ${n} row(s) containing ${needle === alice.id ? "the user's id" : "the user's email"}`,
          );
        report.rows_left_after_delete += n;
      }
    }
    for (const [table, n] of Object.entries(await userRowCounts(db, alice.id))) {
      report.rows_left_after_delete += n;
      if (n) details.push(`after deletion, ${n} "${table}" row(s) still selected as the user's`);
    }
    const bobAfter = await userRowCounts(db, bob.id);
    for (const table of Object.keys(bobBefore)) {
      if (bobBefore[table] !== bobAfter[table]) {
        report.other_user_rows_changed += Math.abs(bobBefore[table] - bobAfter[table]);
        details.push(`the other user's "${table}" rows changed from ${bobBefore[table]} to ${bobAfter[table]}`);
      }
    }
    // A "backup" of the deleted user's rows: with their key gone, nothing opens.
    const c = await cipherFor(db, bob.id); // a live user's cipher cannot open them either
    for (const row of backup) {
      if (!isSealed(row.content)) continue;
      const opened = c.open(row.content);
      if (alice.markers.some((m) => opened.includes(m))) report.shredded_still_readable++;
    }
    if (!(await db.userKey.count({ where: { userId: bob.id } }))) details.push("the other user's key is missing");
  } finally {
    setEncryptionKeys(undefined);
  }
  return report;
}
