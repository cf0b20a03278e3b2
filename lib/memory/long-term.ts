// Long-term memory: a user's durable facts, preferences and procedures, kept
// apart from chat history, with provenance and a version row for every change.
// Every function takes the signed-in user's id and touches only that user's
// memories, whatever ids the caller (a tool call, a form) passes in.
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import type { Memory, MemoryActor, MemoryKind, MemorySource, MemoryStatus } from "@/lib/generated/prisma/client";
import { countTokens } from "./tokens";
import { redactSecrets } from "./secrets";

export const MEMORY_MAX_CHARS = 500;
export const memoryTextSchema = z
  .string({ error: "A memory needs some text." })
  .trim()
  .min(1, "A memory needs some text.")
  .max(MEMORY_MAX_CHARS, `A memory is at most ${MEMORY_MAX_CHARS} characters.`);
export const memoryKindSchema = z.enum(["fact", "preference", "procedure", "other"]);

export class MemoryNotFoundError extends Error {
  constructor() {
    super("Memory not found.");
  }
}
export class SecretRefusedError extends Error {
  constructor() {
    super("That looks like a secret (a password, key or account number); Mnemo never stores secrets.");
  }
}

/** explicit (said by the user) > manual (edited by hand) > inferred (learned by the model). */
const RANK: Record<MemorySource, number> = { explicit: 3, manual: 2, inferred: 1 };
export function outranks(a: Pick<Memory, "source" | "updatedAt">, b: Pick<Memory, "source" | "updatedAt">): boolean {
  if (RANK[a.source] !== RANK[b.source]) return RANK[a.source] > RANK[b.source];
  return a.updatedAt.getTime() >= b.updatedAt.getTime(); // newer wins
}

export function normalizeText(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

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
};

/**
 * Adds a memory, or returns the existing one when the same text is already
 * remembered (de-duplication); a higher-precedence source takes it over.
 */
export async function addMemory(db: Db, userId: string, m: NewMemory, actor: MemoryActor, reason: string): Promise<Memory> {
  const text = clean(m.text);
  const norm = normalizeText(text);
  // Only memories containing every word of the new one can be duplicates: the
  // full-text index finds them without reading all of the user's memories.
  const candidates = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT id FROM "Memory"
     WHERE "userId" = $1 AND status <> 'archived'
       AND (CASE WHEN numnode(plainto_tsquery('english', $2)) > 0 THEN search @@ plainto_tsquery('english', $2)
                 ELSE lower(text) = lower($2) END)
     LIMIT 50`,
    userId,
    text,
  );
  const rows = candidates.length ? await db.memory.findMany({ where: { id: { in: candidates.map((c) => c.id) } } }) : [];
  const dup = rows.find((c) => normalizeText(c.text) === norm);
  if (dup) {
    if (RANK[m.source] > RANK[dup.source] || (m.status === "active" && dup.status === "pending")) {
      return db.memory.update({ where: { id: dup.id }, data: { source: RANK[m.source] > RANK[dup.source] ? m.source : dup.source, status: "active" } });
    }
    return dup;
  }
  return db.memory.create({
    data: {
      userId,
      text,
      kind: m.kind ?? "fact",
      source: m.source,
      status: m.status ?? "active",
      confidence: m.confidence ?? 1,
      pinned: m.pinned ?? false,
      sourceThreadId: m.sourceThreadId ?? null,
      sourceItemId: m.sourceItemId ?? null,
      sourceRef: m.sourceRef ?? null,
      tokens: countTokens(text),
      versions: { create: { userId, oldText: null, newText: text, actor, reason } },
    },
  });
}

export async function ownedMemory(db: Db, userId: string, id: string): Promise<Memory> {
  const m = await db.memory.findFirst({ where: { id, userId } });
  if (!m) throw new MemoryNotFoundError();
  return m;
}

/**
 * Changes a memory's text (a new version). An inferred change never overwrites
 * a memory from a stronger source: it is kept archived instead, not lost.
 */
export async function updateMemoryText(
  db: Db,
  userId: string,
  id: string,
  newText: string,
  by: { actor: MemoryActor; source: MemorySource; reason: string; sourceThreadId?: string | null; sourceItemId?: string | null },
): Promise<{ memory: Memory; applied: boolean }> {
  const current = await ownedMemory(db, userId, id);
  const text = clean(newText);
  if (RANK[by.source] < RANK[current.source]) {
    const loser = await db.memory.create({
      data: {
        userId,
        text,
        kind: current.kind,
        source: by.source,
        status: "archived",
        sourceThreadId: by.sourceThreadId ?? null,
        sourceItemId: by.sourceItemId ?? null,
        tokens: countTokens(text),
        versions: { create: { userId, oldText: null, newText: text, actor: by.actor, reason: `${by.reason} (archived: "${current.source}" memory takes precedence)` } },
      },
    });
    return { memory: loser, applied: false };
  }
  if (text === current.text) return { memory: current, applied: true };
  const memory = await db.memory.update({
    where: { id },
    data: {
      text,
      source: RANK[by.source] >= RANK[current.source] ? by.source : current.source,
      tokens: countTokens(text),
      sourceThreadId: by.sourceThreadId ?? current.sourceThreadId,
      sourceItemId: by.sourceItemId ?? current.sourceItemId,
      versions: { create: { userId, oldText: current.text, newText: text, actor: by.actor, reason: by.reason } },
    },
  });
  return { memory, applied: true };
}

export async function setMemoryStatus(db: Db, userId: string, id: string, status: MemoryStatus, actor: MemoryActor, reason: string) {
  const current = await ownedMemory(db, userId, id);
  return db.memory.update({
    where: { id },
    data: { status, versions: { create: { userId, oldText: current.text, newText: current.text, actor, reason } } },
  });
}

export async function setPinned(db: Db, userId: string, id: string, pinned: boolean) {
  await ownedMemory(db, userId, id);
  return db.memory.update({ where: { id }, data: { pinned } });
}

export async function deleteMemories(db: Db, userId: string, ids: string[]): Promise<number> {
  const r = await db.memory.deleteMany({ where: { userId, id: { in: ids } } });
  return r.count;
}

/** "Forget me": deletes every memory and stops recalling earlier conversations. */
export async function forgetEverything(db: Db, userId: string): Promise<number> {
  const [deleted] = await db.$transaction([
    db.memory.deleteMany({ where: { userId } }),
    db.memoryUse.deleteMany({ where: { userId } }),
    db.user.update({ where: { id: userId }, data: { memoryResetAt: new Date() } }),
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
  const stale = await db.memory.findMany({
    where: {
      userId,
      status: "active",
      pinned: false,
      OR: [{ lastUsedAt: { lt: cutoff } }, { lastUsedAt: null, updatedAt: { lt: cutoff } }],
    },
    select: { id: true, text: true },
  });
  for (const m of stale) {
    await db.memory.update({
      where: { id: m.id },
      data: { status: "archived", versions: { create: { userId, oldText: m.text, newText: m.text, actor: "model", reason: `Expired: unused for ${days} days` } } },
    });
  }
  return stale.length;
}

/** Words for an OR full-text query: letters and digits only (no tsquery syntax gets through). */
export function queryTerms(text: string, max = 24): string[] {
  const stop = new Set(["the", "a", "an", "and", "or", "is", "are", "was", "were", "what", "who", "when", "where", "why", "how", "do", "does", "did", "i", "me", "my", "you", "your", "to", "of", "in", "on", "for", "it", "that", "this", "with", "about", "know"]);
  const words = normalizeText(text)
    .split(" ")
    .filter((w) => w.length > 1 && !stop.has(w) && /^[\p{L}\p{N}]+$/u.test(w));
  return [...new Set(words)].slice(0, max);
}

export type RankedMemory = Pick<Memory, "id" | "text" | "kind" | "source" | "pinned" | "tokens" | "updatedAt" | "sourceRef"> & { rank: number };

/**
 * The user's active memories ranked by relevance to `text`: each matching word
 * adds its inverse document frequency over the user's memories (BM25 without
 * term frequency), so distinctive words decide the order.
 */
export async function searchMemories(db: Db, userId: string, text: string, limit = 20): Promise<RankedMemory[]> {
  const terms = queryTerms(text);
  if (!terms.length) return [];
  return db.$queryRawUnsafe<RankedMemory[]>(
    `WITH terms AS MATERIALIZED (
       SELECT to_tsquery('english', t) AS q, t AS term FROM unnest($4::text[]) AS t
     ), usable AS MATERIALIZED (SELECT term, q FROM terms WHERE numnode(q) > 0),
     docs AS MATERIALIZED (
       SELECT id, text, kind, source, pinned, tokens, "updatedAt", "sourceRef", search FROM "Memory"
       WHERE "userId" = $1 AND status = 'active' AND search @@ to_tsquery('english', $2)
         AND ("expiresAt" IS NULL OR "expiresAt" > now())
     ), total AS MATERIALIZED (
       SELECT GREATEST(count(*), 1)::float8 AS n FROM "Memory" WHERE "userId" = $1 AND status = 'active'
     ), df AS MATERIALIZED (
       SELECT u.term, count(*)::float8 AS df FROM docs d JOIN usable u ON d.search @@ u.q GROUP BY u.term
     )
     SELECT d.id, d.text, d.kind::text AS kind, d.source::text AS source, d.pinned, d.tokens, d."updatedAt", d."sourceRef",
            sum(ln(1 + (total.n - df.df + 0.5) / (df.df + 0.5)))::float8 AS rank
     FROM docs d JOIN usable u ON d.search @@ u.q JOIN df ON df.term = u.term CROSS JOIN total
     GROUP BY d.id, d.text, d.kind, d.source, d.pinned, d.tokens, d."updatedAt", d."sourceRef"
     ORDER BY rank DESC, d."updatedAt" DESC LIMIT $3`,
    userId,
    terms.join(" | "),
    limit,
    terms,
  );
}

export const memoryListInput = z.object({
  q: z.string().trim().max(200).optional(),
  kind: memoryKindSchema.optional(),
  source: z.enum(["explicit", "inferred", "manual"]).optional(),
  status: z.enum(["active", "pending", "archived"]).optional(),
  sort: z.enum(["updated", "created", "used", "text"]).default("updated"),
});

export async function listMemories(db: Db, userId: string, input: z.input<typeof memoryListInput>) {
  const f = memoryListInput.parse(input);
  const orderBy =
    f.sort === "created" ? { createdAt: "desc" as const } : f.sort === "used" ? { lastUsedAt: { sort: "desc" as const, nulls: "last" as const } } : f.sort === "text" ? { text: "asc" as const } : { updatedAt: "desc" as const };
  return db.memory.findMany({
    where: {
      userId,
      ...(f.kind ? { kind: f.kind } : {}),
      ...(f.source ? { source: f.source } : {}),
      ...(f.status ? { status: f.status } : {}),
      ...(f.q ? { text: { contains: f.q, mode: "insensitive" as const } } : {}),
    },
    orderBy: [{ pinned: "desc" }, orderBy],
    take: 500,
  });
}
