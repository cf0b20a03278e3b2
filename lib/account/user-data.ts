// Where a user's personal data lives: one entry per table in the database.
// Export, account deletion and their tests all read this map, and the tests
// compare it with the live catalog, so a new table without an entry fails them.
//
// `rows`: SQL selecting the user's rows ($1 = user id), or null when the table
// holds nothing of any user's. `key`: an expression naming each row uniquely;
// the export carries it, so completeness can be checked row by row.
// `onDelete`: what account deletion does with the rows ("cascade" = the foreign
// keys remove them with the User row; "detach" = the row stays, the user's id
// is set to null by the foreign key; "delete" = removed explicitly).

import { Prisma } from "@/lib/generated/prisma/client";

export type TableEntry = {
  rows: string | null;
  key: string;
  onDelete: "cascade" | "detach" | "delete" | "none";
  why: string;
};

const threadRows = `"threadId" IN (SELECT id FROM "Thread" WHERE "userId" = $1)`;
const emailOf = `(SELECT email FROM "User" WHERE id = $1)`;

export const USER_DATA: Record<string, TableEntry> = {
  User: { rows: `id = $1`, key: "id", onDelete: "delete", why: "the profile and settings" },
  Account: {
    rows: `"userId" = $1`,
    key: `provider || ':' || "providerAccountId"`,
    onDelete: "cascade",
    why: "linked sign-in providers",
  },
  Session: {
    rows: `"userId" = $1`,
    key: `encode(sha256(convert_to("sessionToken", 'UTF8')), 'hex')`,
    onDelete: "cascade",
    why: "database sessions (tokens are exported hashed)",
  },
  VerificationToken: {
    rows: `identifier = ${emailOf}`,
    key: `encode(sha256(convert_to(token, 'UTF8')), 'hex')`,
    onDelete: "delete",
    why: "sign-in links sent to the email",
  },
  RateLimiterFlexible: {
    rows: `key LIKE '%:' || ${emailOf}`,
    key: "key",
    onDelete: "delete",
    why: "sign-in attempt counters keyed by email",
  },
  Project: {
    rows: `"userId" = $1`,
    key: "id",
    onDelete: "cascade",
    why: "projects: names, instructions and memory mode",
  },
  ProjectMember: {
    rows: `"userId" = $1`,
    key: `"projectId"`,
    onDelete: "cascade",
    why: "shared projects the user belongs to, and as what (their chats there are the project's: lib/projects)",
  },
  ProjectEvent: {
    rows: `"actorId" = $1 OR "subjectId" = $1`,
    key: "id",
    onDelete: "detach",
    why: "a shared project's history naming the user (joined, left, roles): their id is removed, the entry stays",
  },
  ProjectInvite: {
    rows: `"invitedById" = $1 OR email = ${emailOf}`,
    key: `"projectId" || ':' || email`,
    onDelete: "delete",
    why: "invitations to shared projects the user sent (with the address invited), or waiting for their own address",
  },
  ApiKey: {
    rows: `"userId" = $1`,
    key: "id",
    onDelete: "cascade",
    why: "personal API keys: names, scopes, last use (exported without the key's hash)",
  },
  Thread: { rows: `"userId" = $1`, key: "id", onDelete: "cascade", why: "conversations" },
  Item: { rows: threadRows, key: "id", onDelete: "cascade", why: "messages, every branch" },
  Summary: { rows: threadRows, key: "id", onDelete: "cascade", why: "summaries of older turns" },
  ItemVectorGone: {
    rows: `"userId" = $1`,
    key: `"itemId" || ':' || seq`,
    onDelete: "delete",
    why: "ids of messages deleted in the last hour, so app instances drop their vectors (ids only)",
  },
  Attachment: {
    rows: `"userId" = $1`,
    key: "id",
    onDelete: "cascade",
    why: "files attached to messages: the file (base64), its name and its extracted text",
  },
  // Named by its document: a passage is cut from the document's text, which the export carries whole.
  AttachmentPassage: {
    rows: `"userId" = $1`,
    key: `"attachmentId"`,
    onDelete: "cascade",
    why: "a document's passages for search (cut from its text, exported with the document)",
  },
  Memory: { rows: `"userId" = $1`, key: "id", onDelete: "cascade", why: "long-term memories" },
  MemoryVectorState: {
    rows: `"userId" = $1`,
    key: `"userId" || ':' || "lastChange"`,
    onDelete: "cascade",
    why: "when the user's searchable memories last changed (a transaction number, no text), so instances reload vectors",
  },
  MemoryVersion: { rows: `"userId" = $1`, key: "id", onDelete: "cascade", why: "history of each memory" },
  MemoryUse: {
    rows: `"userId" = $1`,
    key: `"itemId" || ':' || "memoryId"`,
    onDelete: "cascade",
    why: "which memories each answer used",
  },
  SignedOutSession: {
    rows: `"userId" = $1`,
    key: "sid",
    onDelete: "cascade",
    why: "signed-out session ids, refused until they expire",
  },
  UserKey: {
    rows: `"userId" = $1`,
    key: `"userId" || ':' || version`,
    onDelete: "cascade",
    why: "encryption keys (exported without key material)",
  },
  AuditLog: {
    rows: `"subjectUserId" = $1 OR "actorId" = $1`,
    key: "id",
    onDelete: "detach",
    why: "administrative access to the user's data, and the user's own admin actions: kept, without the user's id",
  },
  Feedback: {
    rows: `"userId" = $1`,
    key: "id",
    onDelete: "cascade",
    why: "ratings of answers and corrections, with comments",
  },
  Job: {
    rows: `"userId" = $1`,
    key: "id",
    onDelete: "cascade",
    why: "background work queued for the user's answers (ids only, no text)",
  },
  MemorySend: {
    rows: `"userId" = $1`,
    key: "id",
    onDelete: "cascade",
    why: "what left the box: which memories went to which model server, through which client (ids and hosts, no text)",
  },
  UsageDay: {
    rows: `"userId" = $1`,
    key: `"userId" || ':' || to_char(day, 'YYYY-MM-DD')`,
    onDelete: "cascade",
    why: "the usage ledger: model and embedding calls and tokens per day (counts only)",
  },
  AppSetting: {
    rows: null,
    key: "key",
    onDelete: "none",
    why: "deployment settings (an admin's id in updatedBy is cleared on deletion)",
  },
  ModelServerNote: {
    rows: null,
    key: `server || ' ' || kind`,
    onDelete: "none",
    why: "what the app learned about model servers (features refused, prompt sizes read whole; no user data)",
  },
  ReleasedObject: {
    rows: null,
    key: "key",
    onDelete: "none",
    why: "objects of deleted files waiting to be removed from object storage (random names, no user data)",
  },
  _prisma_migrations: { rows: null, key: "id", onDelete: "none", why: "schema history" },
};

/** Tables in the database (public schema), for comparing with USER_DATA. */
export const LIST_TABLES_SQL = Prisma.sql`SELECT table_name AS name FROM information_schema.tables
  WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`;

/** A table of this registry as a quoted identifier (names come from here, never from input). */
export function tableSql(table: string): Prisma.Sql {
  if (!(table in USER_DATA)) throw new Error(`${table} is not in USER_DATA`);
  return Prisma.raw(`"${table}"`);
}

/** The table's `key` expression, as a query fragment: what the export and the privacy check match rows by. */
export function userKeySql(table: string): Prisma.Sql {
  const entry = USER_DATA[table];
  if (!entry) throw new Error(`${table} is not in USER_DATA`);
  return Prisma.raw(entry.key);
}

/** The table's `rows` predicate for one user, as a query fragment (each $1 becomes a parameter). */
export function userRowsSql(table: string, userId: string): Prisma.Sql {
  const rows = USER_DATA[table]?.rows;
  if (!rows) throw new Error(`${table} holds no user's rows`);
  const parts = rows.split("$1");
  return new Prisma.Sql(
    parts,
    parts.slice(1).map(() => userId),
  );
}
