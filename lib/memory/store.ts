// Long-term memory, written: adding, rewriting, retiring and marking memories, each change with a version row. Only
// the gate (./writes.ts) and the user's own hand (the dashboard, a conflict the user settles, the user's memory
// file) import this module: every change a model or a background job starts goes through the gate's rules
// (tests/architecture.test.ts). Every function touches only the given user's memories, whatever ids it is passed.
import { scopeSql } from "@/lib/projects/scope";
import type { UserContext } from "@/lib/user-context";
import type { Db } from "@/lib/db/client";
import type { Memory, MemoryActor, MemoryKind, MemorySource, MemoryStatus } from "@/lib/generated/prisma/client";
import { sealJson, type ContentCipher } from "@/lib/crypto/content";
import { countTokens } from "./tokens";
import { redactSecrets } from "./secrets";
import { SecretRefusedError } from "@/lib/errors";
import { Prisma } from "@/lib/generated/prisma/client";
import { parseSteps } from "./procedures";
import { closeAsPast, validSince } from "./validity";
import { aboutOutdated } from "./about";
import { memoryTextSchema, normalizeText, openMemory, ownedMemory, RANK } from "./long-term";

/** The stored columns for a memory's text. */
export const storedText = (c: ContentCipher, text: string) => ({
  text: c.seal(text),
  searchTokens: c.searchTokens(text),
});

function clean(text: string): string {
  const parsed = memoryTextSchema.parse(text);
  const r = redactSecrets(parsed);
  if (r.onlySecret) throw new SecretRefusedError();
  return r.text;
}

export type NewMemory = {
  text: string;
  kind?: MemoryKind;
  source: MemorySource;
  status?: MemoryStatus;
  confidence?: number;
  pinned?: boolean;
  sourceThreadId?: string | null;
  sourceItemId?: string | null;
  sourceRef?: string | null;
  sourceFeedbackId?: string | null;
  /** Procedures: the ordered steps (already written into the text by procedureText). */
  steps?: string[];
  /** "Remember this for a week": recall leaves it out from then on (it stays on the dashboard). */
  expiresAt?: Date | null;
  /** The user's marks: "don't mention this", "private: never sent off this machine" (an import carries them). */
  muted?: boolean;
  private?: boolean;
  /** When it became true, and (a past memory) when it stopped: lib/memory/validity.ts. */
  validFrom?: Date | null;
  validUntil?: Date | null;
};

/**
 * Adds a memory, or returns the existing one when the same text is already
 * remembered (de-duplication); a higher-precedence source takes it over.
 */
export async function addMemory(u: UserContext, m: NewMemory, actor: MemoryActor, reason: string): Promise<Memory> {
  const { db, userId } = u;
  const text = clean(m.text);
  const norm = normalizeText(text);
  const c = u.cipher;
  // Only memories containing every word of the new one can be duplicates: the
  // full-text index finds them without reading all of the user's memories.
  const keyed = c.searchTerms(normalizeText(text).split(" ").filter(Boolean)).terms;
  // Proposals (a pending row naming another memory) are not memories: never a duplicate to raise or to return.
  const candidates = c.enabled
    ? await db.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM "Memory" WHERE "userId" = ${userId} AND ${scopeSql(u.scope)} AND status NOT IN ('archived', 'past')
           AND "proposalOp" IS NULL
           AND (${keyed.join(" ")}::text = '' OR search @@ mnemo_user_query(${userId}, 'simple', ${keyed.join(" ")}))
         LIMIT 200
      `
    : await db.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM "Memory"
         WHERE "userId" = ${userId} AND ${scopeSql(u.scope)} AND status NOT IN ('archived', 'past') AND "proposalOp" IS NULL
           AND (CASE WHEN numnode(mnemo_user_query(${userId}, 'english', ${text})) > 0 THEN search @@ mnemo_user_query(${userId}, 'english', ${text})
                     ELSE lower(text) = lower(${text}) END)
         LIMIT 50
      `;
  const rows = candidates.length
    ? await db.memory.findMany({ where: { id: { in: candidates.map((x) => x.id) } } })
    : [];
  const dup = rows.map((x) => openMemory(c, x)).find((x) => normalizeText(x.text) === norm);
  if (dup) return mergeIntoDuplicate(u, dup, m);
  const created = await db.memory.create({
    data: {
      userId,
      // Learned in a project: it belongs to the project (lib/projects/scope.ts).
      projectId: u.scope.projectId,
      ...storedText(c, text),
      kind: m.kind ?? "fact",
      source: m.source,
      status: m.status ?? "active",
      confidence: m.confidence ?? 1,
      pinned: m.pinned ?? false,
      sourceThreadId: m.sourceThreadId ?? null,
      sourceItemId: m.sourceItemId ?? null,
      sourceRef: m.sourceRef ?? null,
      expiresAt: m.expiresAt ?? null,
      muted: m.muted ?? false,
      private: m.private ?? false,
      validFrom: m.validFrom ?? null,
      validUntil: m.validUntil ?? null,
      sourceFeedbackId: m.sourceFeedbackId ?? null,
      // In a shared project: the member who taught it (lib/projects/members.ts: departure).
      addedById: u.actorId !== userId ? u.actorId : null,
      steps: (() => {
        const steps = m.steps?.length ? m.steps : m.kind === "procedure" ? parseSteps(text) : null;
        return steps ? (sealJson(c, steps) as never) : undefined;
      })(),
      tokens: countTokens(text),
      versions: { create: { userId, oldText: null, newText: c.seal(text), actor, reason } },
    },
  });
  return openMemory(c, created);
}

/**
 * The same words said again: the existing memory stays, taking the stronger source and the stricter of the marks
 * ("don't mention", "private"). Its status is never raised above the incoming one: a memory arriving for review
 * (pending) leaves a pending duplicate pending; only an incoming active one makes it active.
 */
async function mergeIntoDuplicate(u: UserContext, dup: Memory, m: NewMemory): Promise<Memory> {
  const incoming = m.status ?? "active";
  const data = {
    ...(m.muted && !dup.muted ? { muted: true } : {}),
    ...(m.private && !dup.private ? { private: true } : {}),
    ...(RANK[m.source] > RANK[dup.source] ? { source: m.source } : {}),
    ...(incoming === "active" && dup.status === "pending" ? { status: "active" as const } : {}),
  };
  // Another member of a shared project saying it again confirms it: it stays when its teacher leaves (departure).
  if (u.actorId !== u.userId && dup.addedById !== u.actorId)
    await u.db.memoryVersion.create({
      data: {
        memoryId: dup.id,
        userId: u.userId,
        ...{ oldText: null, newText: null },
        actor: m.sourceItemId ? "model" : "user",
        reason: "Confirmed by another member",
        confirmedById: u.actorId,
      },
    });
  if (!Object.keys(data).length) return dup;
  return openMemory(u.cipher, await u.db.memory.update({ where: { id: dup.id }, data }));
}

/**
 * Changes a memory's text (a new version). An inferred change never overwrites
 * a memory from a stronger source: it is kept archived instead, not lost.
 */
export async function updateMemoryText(
  u: UserContext,
  id: string,
  newText: string,
  by: {
    actor: MemoryActor;
    source: MemorySource;
    reason: string;
    sourceThreadId?: string | null;
    sourceItemId?: string | null;
    /** The world changed (they moved): the old text is kept as a past memory, true until now (lib/memory/validity.ts). */
    closesOld?: boolean;
  },
): Promise<{ memory: Memory; applied: boolean }> {
  const { db, userId } = u;
  const current = await ownedMemory(u, id);
  const text = clean(newText);
  const c = u.cipher;
  // Precedence is between what was learned and what the user said; the user's own edit always stands (a hand edit of
  // something they asked Mnemo to remember was archived as a "weaker" manual text, and the memory stayed unchanged).
  if (by.actor !== "user" && RANK[by.source] < RANK[current.source]) {
    const loser = await db.memory.create({
      data: {
        userId,
        projectId: current.projectId,
        ...storedText(c, text),
        kind: current.kind,
        source: by.source,
        status: "archived",
        sourceThreadId: by.sourceThreadId ?? null,
        sourceItemId: by.sourceItemId ?? null,
        tokens: countTokens(text),
        versions: {
          create: {
            userId,
            oldText: null,
            newText: c.seal(text),
            actor: by.actor,
            reason: `${by.reason} (archived: "${current.source}" memory takes precedence)`,
          },
        },
      },
    });
    return { memory: openMemory(c, loser), applied: false };
  }
  if (text === current.text) return { memory: current, applied: true };
  const now = new Date();
  const closing = !!by.closesOld && current.status === "active" && current.kind !== "procedure";
  const memory = await db.$transaction(async (tx) => {
    if (closing)
      await closeAsPast(tx, current, storedText(c, current.text), now, `${by.reason}: no longer true (memory ${id})`);
    return tx.memory.update({
      where: { id },
      data: {
        ...(closing ? { validFrom: now } : {}),
        ...storedText(c, text),
        source: RANK[by.source] >= RANK[current.source] ? by.source : current.source,
        tokens: countTokens(text),
        // A procedure's steps follow its text; a hand edit also counts as the user re-stating it.
        ...(current.kind === "procedure"
          ? {
              steps: (sealJson(c, parseSteps(text)) ?? Prisma.DbNull) as never,
              needsRevalidation: by.actor === "user" ? false : current.needsRevalidation,
            }
          : {}),
        sourceThreadId: by.sourceThreadId ?? current.sourceThreadId,
        sourceItemId: by.sourceItemId ?? current.sourceItemId,
        versions: {
          create: {
            userId,
            oldText: c.seal(current.text),
            newText: c.seal(text),
            actor: by.actor,
            reason: closing ? `${by.reason} (the earlier fact is kept as past)` : by.reason,
            sourceItemId: by.sourceItemId ?? null,
            sourceBefore: JSON.stringify({ threadId: current.sourceThreadId, itemId: current.sourceItemId }),
          },
        },
      },
    });
  });
  // The user's own rewrite (a learned one only adds detail or moves on: the next consolidation's summary follows).
  if (by.actor === "user") await outdatesAbout(db, current);
  return { memory: openMemory(c, memory), applied: true };
}

/** `from`: the message a model's change was learned from, kept on the version so that undoing it can take it back. */
type ChangeSource = { sourceItemId?: string | null };

export async function setMemoryStatus(
  u: UserContext,
  id: string,
  status: MemoryStatus,
  actor: MemoryActor,
  reason: string,
  from: ChangeSource = {},
) {
  const { db, userId } = u;
  const current = await ownedMemory(u, id);
  const c = u.cipher;
  const sealed = c.seal(current.text);
  const version = { userId, oldText: sealed, newText: sealed, actor, reason, sourceItemId: from.sourceItemId ?? null };
  const m = await db.memory.update({ where: { id }, data: { status, versions: { create: version } } });
  if (current.status === "active" && status !== "active") await outdatesAbout(db, current);
  return openMemory(c, m);
}

/** No longer true (they quit that job): kept as a past memory, true until now, out of recall but for the past. */
export async function endMemory(
  u: UserContext,
  id: string,
  actor: MemoryActor,
  reason: string,
  from: ChangeSource = {},
) {
  const { db, userId } = u;
  const current = await ownedMemory(u, id);
  if (current.kind === "procedure") return setMemoryStatus(u, id, "archived", actor, reason, from);
  const c = u.cipher;
  const sealed = c.seal(current.text);
  const m = await db.memory.update({
    where: { id },
    data: {
      status: "past",
      validFrom: validSince(current),
      validUntil: new Date(),
      pinned: false,
      conflictWithId: null,
      versions: {
        create: { userId, oldText: sealed, newText: sealed, actor, reason, sourceItemId: from.sourceItemId ?? null },
      },
    },
  });
  return openMemory(c, m);
}

export async function setPinned(u: UserContext, id: string, pinned: boolean) {
  const { db } = u;
  await ownedMemory(u, id);
  return openMemory(u.cipher, await db.memory.update({ where: { id }, data: { pinned } }));
}

/** "Don't mention this": the memory stays, shown to the user, and is never sent to a model; a version records it. */
export function setMuted(u: UserContext, id: string, muted: boolean) {
  return setMark(u, id, "muted", muted, muted ? "Marked: don't mention this" : "Marked: may be mentioned again");
}

/** "Private: never sent off this machine": the memory goes only to a model server on a local address. */
export function setPrivate(u: UserContext, id: string, isPrivate: boolean) {
  return setMark(
    u,
    id,
    "private",
    isPrivate,
    isPrivate ? "Marked private: never sent off this machine" : "No longer private",
  );
}

/** A user's mark on their memory (muted, private), with a version saying so; unchanged marks write nothing. */
async function setMark(u: UserContext, id: string, mark: "muted" | "private", value: boolean, reason: string) {
  const { db, userId } = u;
  const m = await ownedMemory(u, id);
  if (m[mark] === value) return openMemory(u.cipher, m);
  const [updated] = await db.$transaction([
    db.memory.update({ where: { id }, data: { [mark]: value } }),
    db.memoryVersion.create({
      data: { memoryId: id, userId, oldText: null, newText: null, actor: "user", reason },
    }),
  ]);
  if (value) await outdatesAbout(db, m);
  return openMemory(u.cipher, updated);
}

/** The user's own status change to `rows`, each with a version saying why; one transaction. */
async function markByUser(
  u: UserContext,
  rows: { id: string; text: string }[],
  data: (id: string) => { status: MemoryStatus; conflictWithId?: null },
  reason: string,
) {
  // The stored text is already sealed under the user's key: the version keeps it as it is.
  const version = (text: string) => ({
    userId: u.userId,
    oldText: text,
    newText: text,
    actor: "user" as const,
    reason,
  });
  await u.db.$transaction(async (tx) => {
    for (const m of rows)
      await tx.memory.update({ where: { id: m.id }, data: { ...data(m.id), versions: { create: version(m.text) } } });
    const ids = rows.map((m) => m.id);
    if (ids.length && data(ids[0]).status === "archived")
      await tx.memory.updateMany({
        where: { userId: u.userId, conflictWithId: { in: ids } },
        data: { conflictWithId: null },
      });
  });
}

/**
 * The user deleted these memories on the dashboard: each goes to the archive, restorable (the toast's Undo, the
 * archived list), out of every prompt at once, its open conflict closed; one waiting for review (not a memory yet)
 * goes for good. Returns the ids archived (what Undo brings back) and how many went for good.
 */
export async function archiveByUser(u: UserContext, ids: string[], reason: string) {
  const rows = await u.db.memory.findMany({
    where: { userId: u.userId, id: { in: ids }, status: { not: "archived" } },
    select: { id: true, text: true, status: true, projectId: true },
  });
  const archive = rows.filter((m) => m.status !== "pending");
  await markByUser(u, archive, () => ({ status: "archived", conflictWithId: null }), reason);
  const drop = rows.filter((m) => m.status === "pending").map((m) => m.id);
  const { count } = await u.db.memory.deleteMany({ where: { userId: u.userId, id: { in: drop } } });
  if (archive.some((m) => m.projectId === null && m.status === "active")) await aboutOutdated(u.db, u.userId);
  return { archived: archive.map((m) => m.id), deleted: count };
}

/** Back from the archive: a memory that was true until a date (past) stays past; anything else is current again. */
export async function restoreByUser(u: UserContext, ids: string[], reason: string): Promise<number> {
  const rows = await u.db.memory.findMany({
    where: { userId: u.userId, id: { in: ids }, status: "archived" },
    select: { id: true, text: true, validUntil: true },
  });
  const past = new Set(rows.filter((m) => m.validUntil).map((m) => m.id));
  await markByUser(u, rows, (id) => ({ status: past.has(id) ? "past" : "active" }), reason);
  return rows.length;
}

/** Deleted for good (from the archive, "Forget me" and account deletion aside): the rows and their history go. */
export async function deleteMemories(db: Db, userId: string, ids: string[]): Promise<number> {
  const general = await db.memory.count({ where: { userId, id: { in: ids }, projectId: null, status: "active" } });
  const r = await db.memory.deleteMany({ where: { userId, id: { in: ids } } });
  if (general) await aboutOutdated(db, userId);
  return r.count;
}

/**
 * "What Mnemo knows about you" is written from the active memories of general memory: one of them leaving what may be
 * mentioned (muted, private, archived, deleted, rewritten by the user) outdates it (lib/memory/about.ts).
 */
export async function outdatesAbout(db: Db, m: Pick<Memory, "userId" | "projectId" | "status">) {
  if (m.projectId === null && m.status === "active") await aboutOutdated(db, m.userId);
}

/**
 * Archives `drop` in favour of `keep` (a merge or a settled contradiction): a
 * version on `drop` says why (`reason`, a fixed phrase: version reasons are not
 * sealed, so no user text goes in) and names the memory that stays by id, a pin (and for two copies of one memory,
 * "don't mention this" and "private") moves over,
 * and any open conflict between the two is closed. Restoring `drop` undoes it.
 * Returns false when either is no longer active (changed meanwhile).
 */
export async function retireMemory(
  db: Db,
  userId: string,
  keepId: string,
  dropId: string,
  reason: string,
  actor: MemoryActor = "model",
  /** The two disagree (not a duplicate): an older `drop` was true until `keep` was, so it is kept as past. */
  contradicts = false,
) {
  const retired = db.$transaction(async (tx) => {
    const pair = await tx.memory.findMany({ where: { id: { in: [keepId, dropId] }, userId, status: "active" } });
    const keep = pair.find((m) => m.id === keepId);
    const drop = pair.find((m) => m.id === dropId);
    // Never across projects: what one place learned does not retire another's (lib/projects/scope.ts).
    if (!keep || !drop || keep.projectId !== drop.projectId) return false;
    const past = contradicts && drop.kind !== "procedure" && validSince(drop) < validSince(keep);
    // Each write only while its memory is still active: one deleted or retired by another request since the read
    // rolls the whole change back (nothing half done, no error for the caller).
    const changed = await tx.memory.updateMany({
      where: { id: drop.id, userId, status: "active" },
      data: {
        ...(past
          ? {
              status: "past" as const,
              validFrom: validSince(drop),
              validUntil: validSince(keep),
              supersededById: keep.id,
            }
          : { status: "archived" as const }),
        pinned: false,
        conflictWithId: null,
      },
    });
    if (!changed.count) throw new ChangedMeanwhile();
    await tx.memoryVersion.create({
      data: {
        memoryId: drop.id,
        userId,
        oldText: drop.text,
        newText: drop.text,
        actor,
        reason: `${reason} (memory ${keep.id})`.slice(0, 1000),
      },
    });
    const stillActive = { id: keep.id, userId, status: "active" as const };
    // A pin moves over. Of two copies of one memory (not a contradiction: other words), what the user said of either
    // holds for the one that stays: "don't mention this" and "private" (the same words must not reach a model
    // through the other copy).
    const same = !contradicts;
    const data = {
      ...(drop.pinned ? { pinned: true } : {}),
      ...(same && drop.muted && !keep.muted ? { muted: true } : {}),
      ...(same && drop.private && !keep.private ? { private: true } : {}),
      ...(keep.conflictWithId === drop.id ? { conflictWithId: null } : {}),
    };
    // (An update with nothing to set reports no rows, so then the check is a count.)
    const kept = Object.keys(data).length
      ? (await tx.memory.updateMany({ where: stillActive, data })).count
      : await tx.memory.count({ where: stillActive });
    if (!kept) throw new ChangedMeanwhile();
    return true;
  });
  return retired.catch((e) => {
    if (e instanceof ChangedMeanwhile) return false;
    throw e;
  });
}

/** Thrown inside a transaction to roll it back when a memory it writes changed since it was read. */
export class ChangedMeanwhile extends Error {}

/**
 * "Forget me": deletes every memory (with its history and where it was used) and the summary of them, stops
 * recalling and learning from the conversations there are now (each thread's `recallFrom`; history imported later is
 * new), and stops learning from imported chats the user had queued. The user's row is written first: learning under
 * way checks it with a locking read after it writes (lib/memory/writes.ts), so it either sees this or finishes before
 * the memories are deleted here.
 */
export async function forgetEverything(db: Db, userId: string): Promise<number> {
  const now = new Date();
  const [, , deleted] = await db.$transaction([
    db.user.update({
      where: { id: userId },
      data: { memoryResetAt: now, aboutSummary: null, aboutSummaryAt: null, aboutSummaryEdited: false },
    }),
    db.$executeRaw`UPDATE "Thread" SET "recallFrom" = ${now},
                     "importLearn" = CASE WHEN "importLearn" = 'queued' THEN NULL ELSE "importLearn" END
                   WHERE "userId" = ${userId}`,
    db.memory.deleteMany({ where: { userId } }),
    db.memoryUse.deleteMany({ where: { userId } }),
  ]);
  return deleted.count;
}
