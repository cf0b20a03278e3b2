// Long-term memory, read: a user's durable facts, preferences and procedures, kept apart from chat history. The
// schemas of a memory's text and kind, precedence, and the queries (one memory, its history, search, the dashboard's
// list). Every function takes the signed-in user's context and reads only that user's memories, whatever ids the
// caller passes in. The writes are in ./store.ts, reached only through the gate (./writes.ts).
import { withRelatedWords } from "./related-words";
import { withWordForms } from "./word-forms";
import { respellings } from "./spelling";
import { z } from "zod";
import { memoryScopeParams, memoryScopeWhere } from "@/lib/projects/scope";
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import { callFunction } from "@/lib/db/function-calls";
import { withKeyNames } from "@/lib/keys/key-reason";
import type { Memory, MemorySource } from "@/lib/generated/prisma/client";
import type { ContentCipher } from "@/lib/crypto/content";
import { NotFoundError } from "@/lib/errors";
import { cleanText, cutGraphemes } from "@/lib/text/policy";

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
export const RANK: Record<MemorySource, number> = { explicit: 3, manual: 2, inferred: 1 };
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

export async function ownedMemory(u: UserContext, id: string): Promise<Memory> {
  const { db, userId } = u;
  const m = await db.memory.findFirst({ where: { id, userId } });
  if (!m) throw new NotFoundError("memory");
  return openMemory(u.cipher, m);
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
  // And the API key a change came through, by id: shown by its name now.
  const reasons = await withKeyNames(
    db,
    userId,
    c,
    rows.map((r) => r.reason),
  );
  return rows.map((r, i) => ({
    ...r,
    reason: reasons[i].replace(NAMED_MEMORY, (whole, id: string) => (texts.has(id) ? `: ${texts.get(id)}` : whole)),
    oldText: r.oldText === null ? null : c.open(r.oldText),
    newText: r.newText === null ? null : c.open(r.newText),
  }));
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
  const plain = queryTerms(text);
  const { config, terms } = c.searchTerms(withWordForms(withRelatedWords(plain, text), await respellings(text, plain)));
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
  /** withoutArchived: with no status asked for, what the user deleted stays in the archive (the dashboard). */
  opts: { inContextScope?: boolean; ids?: string[]; withoutArchived?: boolean } = {},
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
    ...(f.status ? { status: f.status } : opts.withoutArchived ? { status: { not: "archived" as const } } : {}),
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
