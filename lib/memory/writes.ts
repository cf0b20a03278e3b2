// Changes to memories that a model initiates: the extraction after an answer,
// the chat model's memory tools, an agent's tools. Text the user never wrote
// (an imported conversation recalled into the prompt, a pasted page) can steer
// a model, so its changes pass one gate:
// - learning paused: nothing is written;
// - "review learned memories" on: a new memory waits as pending, and an update
//   or a removal becomes a proposal in the review queue (a pending row naming
//   its target) that changes nothing until the user approves it;
// - a pinned memory, or one the user wrote or asked for (explicit, manual), is
//   only ever changed through such a proposal, whatever the setting;
// - otherwise an update is a new version and a removal archives (restorable):
//   a model never deletes a memory;
// - learned from a message the user has since asked to forget ("forget me") or taken back (undo): nothing is kept.
// The user's own edits on the dashboard go straight to lib/memory/long-term.ts.
import { NotFoundError, SecretRefusedError } from "@/lib/errors";
import { inScope } from "@/lib/projects/scope";
import type { MemorySettings, UserContext } from "@/lib/user-context";
import type { Db } from "@/lib/db/client";
import type { Memory } from "@/lib/generated/prisma/client";
import { countTokens } from "./tokens";
import { memoryTextSchema, openMemory, ownedMemory } from "./long-term";
import { addMemory, endMemory, retireMemory, setMemoryStatus, updateMemoryText, type NewMemory } from "./store";
import { revertModelRewrite, revertModelStatusChange } from "./revert";
import { redactSecrets } from "./secrets";
import { markConflict } from "./conflicts";

// The user's own expiry setting ("archive what I have not used for N days"), run by the retention sweep: a rule the
// user set, not a model's change, so it is the store's as it is (pinned memories are never expired).
export { expireUnusedMemories } from "./sweeps";

export type ModelChange =
  | { op: "add"; memory: Omit<NewMemory, "status"> }
  /** `closesOld`: the old text was true until now (kept as a past memory); false: it was wrong, or only less detailed. */
  | { op: "update"; id: string; text: string; closesOld?: boolean }
  /** Forgotten (archived, restorable). */
  | { op: "archive"; id: string }
  /** No longer true: kept as a past memory, true until now (lib/memory/validity.ts). */
  | { op: "end"; id: string };

export type ChangeOrigin = {
  /** Why, for the version row and the review queue (e.g. "Corrected by the conversation"). */
  reason: string;
  /**
   * The change carries the user's own words (a correction they typed on an
   * answer): it may change what they wrote before without a proposal, and
   * counts as theirs. Pause and review still apply.
   */
  userWords?: boolean;
  sourceThreadId?: string | null;
  sourceItemId?: string | null;
};

export type ChangeOutcome =
  | { outcome: "applied"; memory: Memory }
  | { outcome: "proposed"; proposalId: string }
  | { outcome: "refused"; why: string };

/** Only through the review queue: pinned memories and what the user wrote or asked for. */
const protectedMemory = (m: Pick<Memory, "pinned" | "source">) => m.pinned || m.source !== "inferred";

const FORGOTTEN = "The user asked Mnemo to forget that conversation: nothing was changed.";
const UNDONE = "The user took back the message it was learned from: nothing was changed.";
const VIEWER = "A viewer of a shared project reads its memories but does not change them.";

/**
 * Whether the message a change is learned from may no longer teach anything: "forgotten" when "forget me" has covered
 * it (written before its thread's `recallFrom`), "gone" when it no longer exists (the user undid it, cleared the chat or
 * deleted it), else null. With `waitForForget`, first a locking read of the user's row, which "forget me" writes first
 * in its transaction (lib/memory/long-term.ts): one under way is waited for, so the answer is never stale.
 */
export async function evidenceWithdrawn(
  db: Db,
  userId: string,
  evidence: { sourceThreadId?: string | null; sourceItemId?: string | null },
  waitForForget = false,
): Promise<"forgotten" | "gone" | null> {
  if (!evidence.sourceItemId) return null;
  if (waitForForget) await db.$queryRaw<unknown[]>`SELECT 1 FROM "User" WHERE id = ${userId} FOR SHARE`;
  const [row] = await db.$queryRaw<Array<{ forgotten: boolean }>>`
    SELECT COALESCE(i."createdAt" < t."recallFrom", false) AS forgotten FROM "Item" i JOIN "Thread" t ON t.id = i."threadId"
     WHERE i.id = ${evidence.sourceItemId} AND t."userId" = ${userId}`;
  return !row ? "gone" : row.forgotten ? "forgotten" : null;
}

/** Whether "forget me" has covered the message a change is learned from (see evidenceWithdrawn). */
export async function evidenceForgotten(
  db: Db,
  userId: string,
  evidence: { sourceThreadId?: string | null; sourceItemId?: string | null },
  waitForForget = false,
): Promise<boolean> {
  return (await evidenceWithdrawn(db, userId, evidence, waitForForget)) === "forgotten";
}

/**
 * Applies, proposes or refuses one model-initiated change (see the top of this file). A change learned from a
 * message is checked before it is made (the message still there, not forgotten) and, against "forget me", again
 * after: what it wrote while the user said it is removed (the check before spares the work; the one after closes
 * the race). A memory added while its message was being undone is withdrawn as the undo withdraws the others.
 */
export async function modelChange(
  u: UserContext,
  change: ModelChange,
  origin: ChangeOrigin,
  known?: MemorySettings,
): Promise<ChangeOutcome> {
  if (u.readOnly) return { outcome: "refused", why: VIEWER };
  const withdrawn = await evidenceWithdrawn(u.db, u.userId, origin);
  if (withdrawn) return { outcome: "refused", why: withdrawn === "forgotten" ? FORGOTTEN : UNDONE };
  const r = await applyChange(u, change, origin, known);
  if (r.outcome === "refused") return r;
  // Undone while it was written: taken back like what was learned before the undo (the undo's own pass may have run).
  if (r.outcome === "applied" && (await evidenceWithdrawn(u.db, u.userId, origin)) === "gone") {
    await withdrawLearnedFrom(u, [origin.sourceItemId!]);
    return { outcome: "refused", why: UNDONE };
  }
  const forgotten = await undoIfForgotten(u, origin, r.outcome === "applied" ? r.memory.id : r.proposalId);
  return forgotten ? { outcome: "refused", why: FORGOTTEN } : r;
}

/**
 * After a write learned from a message: if "forget me" has covered that message meanwhile, removes the row the write
 * left (`id`) when it names that message as its source. Every row from before "forget me" was deleted by it, so a
 * row still here naming another source (the same words said again since) is not this write's and stays. No clocks
 * are compared (the app's and the database's may differ). Returns whether it was forgotten.
 */
export async function undoIfForgotten(
  u: UserContext,
  origin: Pick<ChangeOrigin, "sourceItemId">,
  id: string,
): Promise<boolean> {
  if (!origin.sourceItemId || !(await evidenceForgotten(u.db, u.userId, origin, true))) return false;
  await u.db.memory.deleteMany({ where: { id, userId: u.userId, sourceItemId: origin.sourceItemId } });
  return true;
}

async function applyChange(
  u: UserContext,
  change: ModelChange,
  origin: ChangeOrigin,
  known?: MemorySettings,
): Promise<ChangeOutcome> {
  const p = known ?? (await u.settings());
  if (p.paused) return { outcome: "refused", why: "The user has paused memory: nothing was changed." };
  if (change.op === "add") {
    // Its provenance is the change's when the memory names none (the message it was learned from).
    const from = {
      sourceThreadId: change.memory.sourceThreadId ?? origin.sourceThreadId ?? null,
      sourceItemId: change.memory.sourceItemId ?? origin.sourceItemId ?? null,
    };
    // The user's own request (their words in chat, their own client): the version says the user did it.
    const memory = await addMemory(
      u,
      { ...change.memory, ...from, status: p.review ? "pending" : "active" },
      origin.userWords ? "user" : "model",
      origin.reason,
    );
    return { outcome: "applied", memory };
  }
  const target = await ownedMemory(u, change.id);
  // A model works in its thread's scope: a memory it was never shown (another project's) is out of its reach.
  if (!inScope(u.scope, target.projectId)) throw new NotFoundError("memory");
  // Nor a private one, for a model off this machine: it was never shown it, and its change would copy the text out
  // (a past row, a proposal) and send it on (lib/memory/disclosure.ts).
  if (target.private && !u.scope.privateOk) throw new NotFoundError("memory");
  if (target.status !== "active") return { outcome: "refused", why: "That memory is not active." };
  if (p.review || (protectedMemory(target) && !origin.userWords)) return propose(u, target, change, origin);
  if (change.op === "update") {
    const r = await updateMemoryText(u, target.id, change.text, {
      actor: "model",
      source: origin.userWords ? "explicit" : "inferred",
      reason: origin.reason,
      sourceThreadId: origin.sourceThreadId,
      sourceItemId: origin.sourceItemId,
      closesOld: change.closesOld,
    });
    return r.applied
      ? { outcome: "applied", memory: r.memory }
      : { outcome: "refused", why: "Kept the stronger memory." };
  }
  const from = { sourceItemId: origin.sourceItemId };
  const memory =
    change.op === "end"
      ? await endMemory(u, target.id, "model", origin.reason, from)
      : await setMemoryStatus(u, target.id, "archived", "model", origin.reason, from);
  return { outcome: "applied", memory };
}

/** A consolidation's verdict on two active memories: one retires in favour of the other. */
export type Retirement = {
  keepId: string;
  dropId: string;
  /** Why, a fixed phrase (version reasons are not sealed: no user text goes in). */
  reason: string;
  /** The two disagree (a contradiction), rather than say the same thing. */
  contradicts?: boolean;
  /**
   * The same words (case and punctuation aside): retiring a copy loses nothing, as its pin and marks move to the one
   * kept, so a pinned or user-written copy may go without a proposal. Pause and review still hold.
   */
  sameWords?: boolean;
};

export type RetireOutcome = "retired" | "proposed" | "conflict" | "refused";

/**
 * Consolidation's changes (merging the same memory said twice, settling a contradiction) through the gate: nothing
 * while learning is paused; with review on, or when the memory to retire is pinned or the user's own (explicit,
 * manual), a merge becomes a proposal to forget it and a contradiction a conflict for the user to settle. Otherwise
 * the memory retires (archived, or past for an older contradicted fact), restorable.
 */
export async function modelRetire(u: UserContext, r: Retirement, known?: MemorySettings): Promise<RetireOutcome> {
  const p = known ?? (await u.settings());
  if (p.paused) return "refused";
  const pair = await u.db.memory.findMany({
    where: { id: { in: [r.keepId, r.dropId] }, userId: u.userId, status: "active" },
  });
  const keep = pair.find((m) => m.id === r.keepId);
  const drop = pair.find((m) => m.id === r.dropId);
  if (!keep || !drop || keep.projectId !== drop.projectId) return "refused";
  if (p.review || (protectedMemory(drop) && !r.sameWords)) {
    if (r.contradicts) return (await markConflict(u.db, u.userId, keep.id, drop.id)) ? "conflict" : "refused";
    const proposed = await propose(u, openMemory(u.cipher, drop), { op: "archive", id: drop.id }, { reason: r.reason });
    return proposed.outcome === "proposed" ? "proposed" : "refused";
  }
  const done = await retireMemory(u.db, u.userId, keep.id, drop.id, r.reason, "model", !!r.contradicts);
  return done ? "retired" : "refused";
}

/** A pending row that names its target: nothing changes until the user approves it. */
async function propose(
  u: UserContext,
  target: Memory,
  change: Exclude<ModelChange, { op: "add" }>,
  origin: ChangeOrigin,
): Promise<ChangeOutcome> {
  const { db, userId } = u;
  const text = change.op === "update" ? cleanProposal(change.text) : target.text;
  // The review queue names what approving does: an update that closes the old text, or one that fixes it.
  const op = change.op === "update" && change.closesOld ? "supersede" : change.op;
  const c = u.cipher;
  // Asking twice for the same change leaves one proposal.
  const open = await db.memory.findMany({
    where: { userId, status: "pending", proposalForId: target.id, proposalOp: op },
  });
  const same = open.find((m) => c.open(m.text) === text);
  if (same) return { outcome: "proposed", proposalId: same.id };
  const row = await db.memory.create({
    data: {
      userId,
      projectId: target.projectId,
      text: c.seal(text),
      searchTokens: c.searchTokens(text),
      kind: target.kind,
      source: "inferred",
      status: "pending",
      proposalOp: op,
      proposalForId: target.id,
      // The target's marks hold for the proposal's words too.
      muted: target.muted,
      private: target.private,
      sourceThreadId: origin.sourceThreadId ?? null,
      sourceItemId: origin.sourceItemId ?? null,
      tokens: countTokens(text),
      versions: { create: { userId, oldText: null, newText: c.seal(text), actor: "model", reason: origin.reason } },
    },
  });
  return { outcome: "proposed", proposalId: row.id };
}

function cleanProposal(text: string): string {
  const r = redactSecrets(memoryTextSchema.parse(text));
  if (r.onlySecret) throw new SecretRefusedError();
  return r.text;
}

/**
 * The user's answer to a pending row: a new memory becomes active (or is
 * archived); a proposal is carried out on its target (or dropped), and the
 * proposal row itself is removed either way (its target's history keeps the change).
 */
export async function reviewPending(u: UserContext, id: string, approve: boolean): Promise<void> {
  const { db, userId } = u;
  const m = await ownedMemory(u, id);
  if (m.status !== "pending") return;
  if (!m.proposalOp) {
    const verdict = approve ? "Approved in the review queue" : "Rejected in the review queue";
    await setMemoryStatus(u, m.id, approve ? "active" : "archived", "user", verdict);
    return;
  }
  const target = m.proposalForId
    ? await db.memory.findFirst({ where: { id: m.proposalForId, userId, status: "active" } })
    : null;
  if (approve && target) {
    if (m.proposalOp === "update" || m.proposalOp === "supersede")
      await updateMemoryText(u, target.id, m.text, {
        actor: "user",
        source: target.source,
        reason: "Approved a change the model proposed",
        sourceThreadId: m.sourceThreadId,
        sourceItemId: m.sourceItemId,
        closesOld: m.proposalOp === "supersede",
      });
    else if (m.proposalOp === "end")
      await endMemory(u, target.id, "user", "Approved that it is no longer true, as the model proposed");
    else await setMemoryStatus(u, target.id, "archived", "user", "Approved forgetting it, as the model proposed");
  }
  await db.memory.deleteMany({ where: { id: m.id, userId } });
}

const WITHDRAWN = "Withdrawn: the message it was learned from was undone";
const UNDONE_REWRITE = "Undone: the message that changed it was undone";
const UNDONE_STATUS = "Current again: the message that ended or forgot it was undone";

/**
 * The user took these messages back (undo): what was learned from them goes too. A memory first written from one of
 * them and never changed since (by the user or a later conversation) is archived, restorable, saying why; a proposal
 * made from one of them is dismissed the same way. A memory one of them rewrote, unchanged since, gets its earlier
 * text back (and, if the rewrite closed it as past, its past copy goes: revertModelRewrite). One a model ended ("no
 * longer true") or forgot because of one of them, unchanged since, is current again (revertModelStatusChange).
 * Returns how many memories were withdrawn or restored.
 */
export async function withdrawLearnedFrom(u: UserContext, itemIds: string[]): Promise<number> {
  if (!itemIds.length) return 0;
  const rows = await u.db.memory.findMany({
    where: { userId: u.userId, sourceItemId: { in: itemIds }, status: { in: ["active", "pending"] } },
    select: { id: true, versions: { where: { oldText: { not: null } }, select: { id: true }, take: 1 } },
  });
  let n = 0;
  for (const m of rows) {
    // Only the version that wrote it: no edit, update or review since.
    if (!m.versions.length) {
      await setMemoryStatus(u, m.id, "archived", "user", WITHDRAWN);
      n++;
    } else if (await revertModelRewrite(u, m.id, itemIds, UNDONE_REWRITE)) n++;
  }
  const ended = await u.db.memoryVersion.findMany({
    where: {
      userId: u.userId,
      sourceItemId: { in: itemIds },
      actor: "model",
      memory: { status: { in: ["past", "archived"] } },
    },
    select: { id: true, memoryId: true },
  });
  for (const v of ended) if (await revertModelStatusChange(u, v.memoryId, v.id, UNDONE_STATUS)) n++;
  return n;
}
