// Long-term memory: a user's durable facts, preferences and procedures, kept
// apart from chat history, with provenance and a version row for every change.
// Every function takes the signed-in user's id and touches only that user's
// memories, whatever ids the caller (a tool call, a form) passes in.
import { withRelatedWords } from "./related-words";
import { withWordForms } from "./word-forms";
import { z } from "zod";
import { memoryScopeParams, memoryScopeWhere, scopeSql } from "@/lib/projects/scope";
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import type { Db } from "@/lib/db/client";
import { callFunction } from "@/lib/db/function-calls";
import type { Memory, MemoryActor, MemoryKind, MemorySource, MemoryStatus } from "@/lib/generated/prisma/client";
import { sealJson, type ContentCipher } from "@/lib/crypto/content";
import { countTokens } from "./tokens";
import { redactSecrets } from "./secrets";
import { NotFoundError, SecretRefusedError } from "@/lib/errors";
import { cleanText, cutGraphemes } from "@/lib/text/policy";
import { Prisma } from "@/lib/generated/prisma/client";
import { parseSteps } from "./procedures";
import { archiveWhere } from "./sweeps";
import { closeAsPast, validSince } from "./validity";
import { aboutOutdated } from "./about";

export const MEMORY_MAX_CHARS = 500;
export const memoryTextSchema = z
  .string({ error: "A memory needs some text." })
  .transform(cleanText)
  .pipe(
    z
      .string()
      .trim()
      .min(1, "A memory needs some text.")
      .max(MEMORY_MAX_CHARS, `A memory is at most ${MEMORY_MAX_CHARS} characters.`),
  );
export const memoryKindSchema = z.enum(["fact", "preference", "procedure", "other"]);

/** explicit (said by the user) > manual (edited by hand) > inferred (learned by the model). */
const RANK: Record<MemorySource, number> = { explicit: 3, manual: 2, inferred: 1 };
/**
 * Precedence on conflict: explicit (said by the user) > manual (written by hand)
 * > verified (learned, then confirmed by a good rating) > inferred, then newer.
 */
export function standing(m: Pick<Memory, "source"> & { verifiedAt?: Date | null }): number {
  return m.source === "inferred" && m.verifiedAt ? 1.5 : RANK[m.source];
}
export function outranks(
  a: Pick<Memory, "source" | "updatedAt"> & { verifiedAt?: Date | null },
  b: Pick<Memory, "source" | "updatedAt"> & { verifiedAt?: Date | null },
): boolean {
  if (standing(a) !== standing(b)) return standing(a) > standing(b);
  return a.updatedAt.getTime() >= b.updatedAt.getTime(); // newer wins
}

export function normalizeText(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** A memory row as the user reads it (text decrypted when encryption at rest is on). */
export const openMemory = <T extends { text: string }>(c: ContentCipher, m: T): T => ({ ...m, text: c.open(m.text) });
/** The stored columns for a memory's text. */
const storedText = (c: ContentCipher, text: string) => ({ text: c.seal(text), searchTokens: c.searchTokens(text) });

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
  const candidates = c.enabled
    ? await db.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM "Memory" WHERE "userId" = ${userId} AND ${scopeSql(u.scope)} AND status NOT IN ('archived', 'past')
           AND (${keyed.join(" ")}::text = '' OR search @@ mnemo_user_query(${userId}, 'simple', ${keyed.join(" ")}))
         LIMIT 200
      `
    : await db.$queryRaw<Array<{ id: string }>>`
        SELECT id FROM "Memory"
         WHERE "userId" = ${userId} AND ${scopeSql(u.scope)} AND status NOT IN ('archived', 'past')
           AND (CASE WHEN numnode(mnemo_user_query(${userId}, 'english', ${text})) > 0 THEN search @@ mnemo_user_query(${userId}, 'english', ${text})
                     ELSE lower(text) = lower(${text}) END)
         LIMIT 50
      `;
  const rows = candidates.length
    ? await db.memory.findMany({ where: { id: { in: candidates.map((x) => x.id) } } })
    : [];
  const dup = rows.map((x) => openMemory(c, x)).find((x) => normalizeText(x.text) === norm);
  if (dup) {
    // The same words marked "don't mention" or "private" (say, in an imported file): the stricter mark holds.
    const marks = {
      ...(m.muted && !dup.muted ? { muted: true } : {}),
      ...(m.private && !dup.private ? { private: true } : {}),
    };
    if (RANK[m.source] > RANK[dup.source] || (m.status === "active" && dup.status === "pending")) {
      const updated = await db.memory.update({
        where: { id: dup.id },
        data: { source: RANK[m.source] > RANK[dup.source] ? m.source : dup.source, status: "active", ...marks },
      });
      return openMemory(c, updated);
    }
    if (Object.keys(marks).length) return openMemory(c, await db.memory.update({ where: { id: dup.id }, data: marks }));
    return dup;
  }
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

export async function ownedMemory(u: UserContext, id: string): Promise<Memory> {
  const { db, userId } = u;
  const m = await db.memory.findFirst({ where: { id, userId } });
  if (!m) throw new NotFoundError("memory");
  return openMemory(u.cipher, m);
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

/**
 * Takes back a model's last rewrite of a memory (the message behind it was undone): the text before comes back, and
 * when the rewrite closed that text as past ("they moved"), the past copy it made goes and the memory is again true
 * since when the old text was. Nothing happens (false) when the last change is not a model's rewrite learned from one
 * of `itemIds` (its version names the message), or anything has changed the memory since. One transaction, whose
 * write only lands if no change came in between.
 */
export async function revertModelRewrite(
  u: UserContext,
  id: string,
  itemIds: string[],
  reason: string,
): Promise<boolean> {
  const { db, userId } = u;
  const c = u.cipher;
  const m = await db.memory.findFirst({
    where: { id, userId },
    include: { versions: { orderBy: { createdAt: "desc" }, take: 1 } },
  });
  const last = m?.versions[0];
  if (!m || !last || last.actor !== "model" || last.oldText === null || last.newText === null) return false;
  // A consolidation's or another turn's rewrite since is not this one.
  if (!last.sourceItemId || !itemIds.includes(last.sourceItemId)) return false;
  const before = c.open(last.oldText);
  const now = c.open(m.text);
  if (c.open(last.newText) !== now || before === now) return false;
  // The past copy that rewrite made: superseded by this memory, closed when the rewrite was written.
  const closed = await db.memory.findFirst({
    where: {
      userId,
      supersededById: m.id,
      status: "past",
      validUntil: { gte: new Date(last.createdAt.getTime() - 5_000), lte: new Date(last.createdAt.getTime() + 5_000) },
    },
    orderBy: { validUntil: "desc" },
  });
  const done = await db.$transaction(async (tx) => {
    // Still as that rewrite left it: else the later change stands.
    const { count } = await tx.memory.updateMany({
      where: { id: m.id, userId, versions: { none: { createdAt: { gt: last.createdAt } } } },
      data: {
        ...storedText(c, before),
        tokens: countTokens(before),
        ...(closed
          ? {
              // True since it was written (validSince's reading of no date) stays no date.
              validFrom: closed.validFrom?.getTime() === m.createdAt.getTime() ? null : closed.validFrom,
              sourceThreadId: closed.sourceThreadId,
              sourceItemId: closed.sourceItemId,
            }
          : sourceBefore(last.sourceBefore)),
      },
    });
    if (!count) return false;
    if (closed) await tx.memory.delete({ where: { id: closed.id } });
    await tx.memoryVersion.create({
      data: { memoryId: m.id, userId, oldText: c.seal(now), newText: c.seal(before), actor: "user", reason },
    });
    return true;
  });
  if (done) await outdatesAbout(db, m);
  return done;
}

const SOURCE_BEFORE = z.object({ threadId: z.string().nullable(), itemId: z.string().nullable() });

/** The source a text change recorded as the memory's before it (none recorded: an older version, left as it is). */
function sourceBefore(recorded: string | null): { sourceThreadId?: string | null; sourceItemId?: string | null } {
  const was = SOURCE_BEFORE.safeParse(recorded ? JSON.parse(recorded) : null);
  return was.success ? { sourceThreadId: was.data.threadId, sourceItemId: was.data.itemId } : {};
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

/**
 * Takes back a model's "no longer true" or "forget" (version `versionId`, the message behind it was undone): the
 * memory is current again, as it was before. Nothing happens (false) when anything has changed the memory since, or
 * that version did not change its status. One conditional write, so a change made meanwhile is never overwritten.
 */
export async function revertModelStatusChange(
  u: UserContext,
  memoryId: string,
  versionId: string,
  reason: string,
): Promise<boolean> {
  const { db, userId } = u;
  const m = await db.memory.findFirst({
    where: { id: memoryId, userId, status: { in: ["past", "archived"] } },
    include: { versions: { orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 1 } },
  });
  const last = m?.versions[0];
  if (!m || !last || last.id !== versionId || last.actor !== "model" || last.oldText !== last.newText) return false;
  const ended = m.status === "past";
  const done = await db.$transaction(async (tx) => {
    // Still as that version left it (no edit, restore or review in between): else the user's later change stands.
    const { count } = await tx.memory.updateMany({
      where: { id: m.id, userId, status: m.status, versions: { none: { createdAt: { gt: last.createdAt } } } },
      data: {
        status: "active",
        // True since it was learned reads as no date, as before the change gave it one.
        ...(ended
          ? { validUntil: null, validFrom: m.validFrom?.getTime() === m.createdAt.getTime() ? null : m.validFrom }
          : {}),
      },
    });
    if (count)
      await tx.memoryVersion.create({
        data: { memoryId: m.id, userId, oldText: m.text, newText: m.text, actor: "user", reason },
      });
    return count > 0;
  });
  if (done) await outdatesAbout(db, { ...m, status: "active" });
  return done;
}

/** How a version's reason names another memory (see retireMemory). */
const NAMED_MEMORY = / \(memory ([\w-]+)\)/g;

/** A memory's versions, newest first (the memory must be the user's). */
export async function memoryHistory(u: UserContext, id: string) {
  const { db, userId } = u;
  await ownedMemory(u, id);
  const c = u.cipher;
  const rows = await db.memoryVersion.findMany({
    where: { memoryId: id, userId },
    orderBy: { createdAt: "desc" },
    take: 100,
  });
  // Reasons name other memories by id (they are not sealed); the reader sees their text.
  const named = [...new Set(rows.flatMap((r) => [...r.reason.matchAll(NAMED_MEMORY)].map((m) => m[1])))];
  const texts = new Map(
    named.length
      ? (await db.memory.findMany({ where: { userId, id: { in: named } }, select: { id: true, text: true } })).map(
          (m) => [m.id, c.open(m.text)] as const,
        )
      : [],
  );
  return rows.map((r) => ({
    ...r,
    reason: r.reason.replace(NAMED_MEMORY, (whole, id: string) => (texts.has(id) ? `: ${texts.get(id)}` : whole)),
    oldText: r.oldText === null ? null : c.open(r.oldText),
    newText: r.newText === null ? null : c.open(r.newText),
  }));
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

/**
 * Records the memories given to the model with an answer, and which of them the answer drew on (`used`, by
 * default all). Only a used memory counts a use (`useCount`, `lastUsedAt`): the profile's order, expiry of
 * unused memories, ratings and procedure checks follow what answers drew on, not what they were given.
 */
export async function recordUses(
  db: Db,
  userId: string,
  itemId: string,
  given: string[],
  used: string[] = given,
): Promise<void> {
  await db.$executeRaw`
    WITH added AS (
       INSERT INTO "MemoryUse" ("itemId", "memoryId", "userId", used)
       SELECT ${itemId}, m.id, ${userId}, m.id = ANY(${used}::text[]) FROM "Memory" m WHERE m.id = ANY(${given}::text[]) AND m."userId" = ${userId}
       ON CONFLICT DO NOTHING RETURNING "memoryId", used
     )
     UPDATE "Memory" SET "lastUsedAt" = ${new Date()}, "useCount" = "useCount" + 1
     WHERE id IN (SELECT "memoryId" FROM added WHERE used)
  `;
}

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
async function outdatesAbout(db: Db, m: Pick<Memory, "userId" | "projectId" | "status">) {
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

/**
 * Optional expiry: archives the user's unpinned active memories not used (nor
 * changed) for `days` days, with a version saying why. Archived, not deleted:
 * the dashboard can restore them.
 */
export async function expireUnusedMemories(db: Db, userId: string, days: number, now = new Date()): Promise<number> {
  if (days <= 0) return 0;
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  return archiveWhere(
    db,
    userId,
    {
      status: "active",
      pinned: false,
      OR: [{ lastUsedAt: { lt: cutoff } }, { lastUsedAt: null, updatedAt: { lt: cutoff } }],
    },
    `Expired: unused for ${days} days`,
  );
}

/** How much of a question recall reads (see searchableQuestion). */
export const SEARCHABLE_QUESTION_CHARS = 8_000;

/**
 * The part of a question that recall reads: a pasted document is the question's material, not its words. Only its
 * first words become search terms anyway (queryTerms), and reading names, dates and word stems across 7 MB held the
 * server for most of a second. Its start and its end are kept: the question asked about a document often follows it.
 */
export function searchableQuestion(text: string): string {
  if (text.length <= SEARCHABLE_QUESTION_CHARS) return text;
  const end = SEARCHABLE_QUESTION_CHARS / 4;
  let from = text.length - end;
  if (/[\uDC00-\uDFFF]/.test(text[from])) from++; // not half a character
  return `${cutGraphemes(text, SEARCHABLE_QUESTION_CHARS - end)}\n…\n${text.slice(from)}`;
}

/** Words for an OR full-text query: letters and digits only (no tsquery syntax gets through). */
export function queryTerms(text: string, max = 24): string[] {
  // Kept on a few lines (one word per line would fill a screen).
  // prettier-ignore
  const stop = new Set([
    "the", "a", "an", "and", "or", "is", "are", "was", "were", "what", "who", "when", "where", "why", "how",
    "do", "does", "did", "i", "me", "my", "you", "your", "to", "of", "in", "on", "for", "it", "that",
    "this", "with", "about", "know",
  ]);
  const words = normalizeText(text)
    .split(" ")
    .filter((w) => w.length > 1 && !stop.has(w) && /^[\p{L}\p{N}]+$/u.test(w));
  return [...new Set(words)].slice(0, max);
}

export type RankedMemory = Pick<
  Memory,
  "id" | "text" | "kind" | "source" | "pinned" | "tokens" | "updatedAt" | "sourceRef" | "needsRevalidation"
> & {
  rank: number;
  /** When it became true, else when it was learned (lib/memory/validity.ts validSince). */
  since: Date;
};

/**
 * The user's active memories ranked by relevance to `text`: each matching word
 * adds its inverse document frequency over the user's memories (BM25 without
 * term frequency), so distinctive words decide the order.
 */
export async function searchMemories(u: UserContext, question: string, limit = 20): Promise<RankedMemory[]> {
  const { db, userId } = u;
  const text = searchableQuestion(question);
  const c = u.cipher;
  const { config, terms } = c.searchTerms(withWordForms(withRelatedWords(queryTerms(text), text)));
  if (!terms.length) return [];
  const rows = await callFunction<RankedMemory>(db, {
    // SQL in the migration recall_functions (PL/pgSQL keeps its plan): ranked on
    // narrow rows, and a word in COMMON_MEMORY_WORD memories or more is left out
    // when the question has rarer ones.
    call: `mnemo_search_memories($1, $2::int, $3::text[], $4::regconfig, $5::int, $6::text, $7::boolean, $8::boolean)`,
    params: [userId, limit, terms, config, COMMON_MEMORY_WORD, ...memoryScopeParams(u.scope)],
    dates: ["updatedAt", "since"],
  });
  return rows.map((m) => openMemory(c, m));
}

/**
 * Whether a listed active memory may go to a model (the tools' and MCP's lists): not one the user said not to mention,
 * nor one whose time ran out ("remember this for a week"). Recall's own queries filter the same in SQL.
 */
export const mentionable = (m: Pick<Memory, "muted" | "expiresAt">, now = new Date()) =>
  !m.muted && (!m.expiresAt || m.expiresAt > now);

/** The places (general memory, projects) the dashboard's related memories are searched in, at most. */
const MAX_RELATED_PLACES = 20;

/**
 * The dashboard's "related memories" for a search: what the model's memory search finds for these words (their other
 * forms and related words, lib/memory/related-words.ts) in general memory and in each of the user's projects, private
 * ones too (the user is reading their own), best first. Ids only: the dashboard lists them with its own filters.
 */
export async function relatedMemoryIds(u: UserContext, text: string, projectIds: string[], limit = 10) {
  // One search per place (each ranks against its own memories); a user with very many projects gets the first ones.
  const places = [null, ...projectIds.slice(0, MAX_RELATED_PLACES - 1)].map((projectId) =>
    inMemoryScope(u, { projectId, general: projectId === null, privateOk: true }),
  );
  const found = (await Promise.all(places.map((p) => searchMemories(p, text, limit)))).flat();
  return found
    .sort((a, b) => b.rank - a.rank)
    .slice(0, limit)
    .map((m) => m.id);
}

/** A word in this many of the user's memories (any status) is too common to search by, when rarer ones are asked. */
const COMMON_MEMORY_WORD = 200;

export const memoryListInput = z.object({
  q: z.string().trim().max(200).optional(),
  kind: memoryKindSchema.optional(),
  // "feedback": learned from a rating or a correction (any source).
  source: z.enum(["explicit", "inferred", "manual", "feedback"]).optional(),
  status: z.enum(["active", "pending", "archived", "past"]).optional(),
  sort: z.enum(["updated", "created", "used", "text"]).default("updated"),
  // Where the memory belongs: "general" (no project) or a project's id.
  scope: z.string().trim().max(64).optional(),
});

/** The user's memories for the dashboard (every scope, or the one asked), or in the context's scope (a model's). */
export async function listMemories(
  u: UserContext,
  input: z.input<typeof memoryListInput>,
  opts: { inContextScope?: boolean; ids?: string[] } = {},
) {
  const { db, userId } = u;
  const f = memoryListInput.parse(input);
  const c = u.cipher;
  const orderBy =
    f.sort === "created"
      ? { createdAt: "desc" as const }
      : f.sort === "used"
        ? { lastUsedAt: { sort: "desc" as const, nulls: "last" as const } }
        : f.sort === "text"
          ? { text: "asc" as const }
          : { updatedAt: "desc" as const };
  const where = {
    userId,
    ...(f.kind ? { kind: f.kind } : {}),
    ...(f.source === "feedback" ? { sourceFeedbackId: { not: null } } : f.source ? { source: f.source } : {}),
    ...(f.status ? { status: f.status } : {}),
    ...(f.scope ? { projectId: f.scope === "general" ? null : f.scope } : {}),
    ...(opts.inContextScope ? memoryScopeWhere(u.scope) : {}),
    ...(opts.ids ? { id: { in: opts.ids } } : {}),
  };
  if (!c.enabled) {
    const rows = await db.memory.findMany({
      where: { ...where, ...(f.q ? { text: { contains: f.q, mode: "insensitive" as const } } : {}) },
      orderBy: [{ pinned: "desc" }, orderBy],
      take: 500,
    });
    return rows.map((m) => openMemory(c, m));
  }
  // Encrypted: the database cannot filter or sort by text, so decrypt the
  // user's own memories and do both here.
  const q = f.q?.toLowerCase();
  const rows = (
    await db.memory.findMany({
      where,
      orderBy: [{ pinned: "desc" }, f.sort === "text" ? { updatedAt: "desc" } : orderBy],
      take: 5000,
    })
  )
    .map((m) => openMemory(c, m))
    .filter((m) => !q || m.text.toLowerCase().includes(q));
  if (f.sort === "text") rows.sort((a, b) => Number(b.pinned) - Number(a.pinned) || a.text.localeCompare(b.text));
  return rows.slice(0, 500);
}
