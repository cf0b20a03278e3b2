// Memories on their own, to take elsewhere or bring back: JSON (importable)
// and Markdown (for reading). Import skips memories already remembered.
import { SecretRefusedError } from "@/lib/errors";
import { inMemoryScope, onHandle, type UserContext } from "@/lib/user-context";
import { exactScope } from "@/lib/projects/scope";
import { importedProject } from "@/lib/import/write";
import type { ImportedProject } from "@/lib/import/conversation";
import { z } from "zod";
import { redactSecrets } from "./secrets";
import type { Db } from "@/lib/db/client";
import { memoryKindSchema, memoryTextSchema, openMemory } from "./long-term";
import { addMemory, type NewMemory } from "./store";
import { count } from "@/lib/text/plural";

export const MEMORIES_FORMAT = "mnemo-memories";
export const MEMORIES_VERSION = 1;
export const MAX_IMPORT = 5000;

const KIND_TITLES = { fact: "Facts", preference: "Preferences", procedure: "Procedures", other: "Other" } as const;

async function allMemories(u: UserContext) {
  const { db, userId } = u;
  const c = u.cipher;
  const rows = await db.memory.findMany({
    where: { userId },
    orderBy: [{ kind: "asc" }, { createdAt: "asc" }],
    omit: { searchTokens: true },
  });
  return rows.map((m) => openMemory(c, m));
}

export async function memoriesJson(u: UserContext, now = new Date()) {
  const rows = await allMemories(u);
  // A project's memories name their project, so an import puts them back in one (not in general memory, where every
  // chat would see what a project kept to itself).
  const projects = new Map(
    (
      await u.db.project.findMany({ where: { userId: u.userId }, select: { id: true, name: true, memoryMode: true } })
    ).map((p) => [p.id, { id: p.id, name: u.cipher.open(p.name), memoryMode: p.memoryMode }]),
  );
  return {
    format: MEMORIES_FORMAT,
    version: MEMORIES_VERSION,
    exportedAt: now.toISOString(),
    memories: rows.map((m) => ({
      text: m.text,
      kind: m.kind,
      status: m.status,
      source: m.source,
      pinned: m.pinned,
      confidence: m.confidence,
      createdAt: m.createdAt.toISOString(),
      updatedAt: m.updatedAt.toISOString(),
      validFrom: m.validFrom?.toISOString() ?? null,
      validUntil: m.validUntil?.toISOString() ?? null,
      // The user's marks travel with the memory: a move to another Mnemo must not send a private one off the machine.
      muted: m.muted,
      private: m.private,
      expiresAt: m.expiresAt?.toISOString() ?? null,
      project: (m.projectId && projects.get(m.projectId)) || null,
      sourceThreadId: m.sourceThreadId,
      sourceItemId: m.sourceItemId,
    })),
  };
}

export async function memoriesMarkdown(u: UserContext, now = new Date()): Promise<string> {
  const rows = await allMemories(u);
  const out = [`# Mnemo memories`, ``, `Exported ${now.toISOString()}. ${count(rows.length, "memory", "memories")}.`];
  for (const kind of Object.keys(KIND_TITLES) as Array<keyof typeof KIND_TITLES>) {
    const group = rows.filter((m) => m.kind === kind);
    if (!group.length) continue;
    out.push("", `## ${KIND_TITLES[kind]}`, "");
    for (const m of group) {
      const flags = [
        m.pinned && "pinned",
        m.private && "private",
        m.muted && "not to be mentioned",
        m.expiresAt && `until ${m.expiresAt.toISOString().slice(0, 10)}`,
        m.status !== "active" && m.status,
        m.source,
      ]
        .filter(Boolean)
        .join(", ");
      // One line per memory: newlines folded so a memory cannot start a heading.
      out.push(`- ${m.text.replace(/\s*\n\s*/g, " ")} _(${flags}; ${m.createdAt.toISOString().slice(0, 10)})_`);
    }
  }
  return out.join("\n") + "\n";
}

/** A mark (muted, private) as a file may write it: true or "true"; absent or anything else is not marked. */
const markSchema = z.preprocess((v) => v === true || v === "true", z.boolean());

export const importFileSchema = z.object({
  format: z.literal(MEMORIES_FORMAT, { error: `Not a Mnemo memories file (expected "format": "${MEMORIES_FORMAT}").` }),
  version: z.literal(MEMORIES_VERSION, {
    error: `Unsupported version (this Mnemo reads version ${MEMORIES_VERSION}).`,
  }),
  memories: z
    .array(
      z.object({
        text: z.string(),
        kind: memoryKindSchema.default("fact"),
        status: z.enum(["active", "pending", "archived", "past"]).default("active"),
        pinned: z.boolean().default(false),
        // When it was true (a past memory needs its end).
        validFrom: z.coerce.date().nullish().catch(null),
        validUntil: z.coerce.date().nullish().catch(null),
        // Files from before these were exported have none: nothing marked.
        muted: markSchema,
        private: markSchema,
        expiresAt: z.coerce.date().nullish().catch(null),
        // The project it belonged to (absent: general memory).
        project: z
          .object({
            id: z.string().min(1).max(64),
            name: z.string().max(200),
            memoryMode: z.enum(["shared", "project_only"]).optional().catch(undefined),
          })
          .nullish()
          .catch(null),
      }),
    )
    .max(MAX_IMPORT, `At most ${MAX_IMPORT} memories per import.`),
});

export type ImportResult = { added: number; skipped: number; rejected: Array<{ index: number; error: string }> };

/**
 * Imports memories from a JSON export, all or nothing: every entry is checked
 * first (text, length, the secret guard), then the accepted ones are written in
 * one transaction. Entries that are empty or nothing but a secret are reported
 * and not written; the counts say what was actually stored: an entry that the
 * secret guard reduced to an existing memory, or a repeat within the file,
 * counts as skipped, not added.
 */
export async function importMemories(u: UserContext, input: unknown): Promise<ImportResult> {
  const file = importFileSchema.parse(input);
  const result: ImportResult = { added: 0, skipped: 0, rejected: [] };
  const accepted: Array<{ text: string; m: (typeof file.memories)[number] }> = [];
  for (const [index, m] of file.memories.entries()) {
    const text = memoryTextSchema.safeParse(m.text);
    if (!text.success) {
      result.rejected.push({ index, error: text.error.issues[0].message });
      continue;
    }
    const guarded = redactSecrets(text.data);
    if (guarded.onlySecret) {
      result.rejected.push({ index, error: new SecretRefusedError().message });
      continue;
    }
    accepted.push({ text: guarded.text, m });
  }
  // Imported by the user themselves: manual memories.
  const counts = await storeAll(
    u,
    accepted.map(({ text, m }) => ({
      text,
      kind: m.kind,
      source: "manual" as const,
      status: m.status === "past" && !m.validUntil ? ("archived" as const) : m.status,
      pinned: m.pinned,
      validFrom: m.validFrom ?? null,
      validUntil: m.status === "past" ? m.validUntil : null,
      muted: m.muted,
      private: m.private,
      expiresAt: m.expiresAt ?? null,
      // Into the project it came from (found again by its id, or made), when the import is not already into one.
      project:
        m.project && u.scope.general
          ? {
              ref: `mnemo:${m.project.id}`,
              name: m.project.name,
              memoryMode: m.project.memoryMode,
              sameAs: m.project.id,
            }
          : null,
    })),
    "Imported from a file",
  );
  return { ...result, ...counts };
}

export const MAX_PASTED_LINES = 500;

/**
 * Another assistant's memory list, pasted as text (ChatGPT's "Manage memories",
 * a notes file): each line becomes a candidate memory in the review queue,
 * bullets and numbering removed. All or nothing, like the file import.
 */
export async function importMemoryList(u: UserContext, text: string): Promise<ImportResult> {
  const lines = listLines(text);
  if (lines.length > MAX_PASTED_LINES)
    throw new z.ZodError([
      { code: "custom", path: [], message: `At most ${MAX_PASTED_LINES} lines at a time.`, input: text },
    ]);
  const result: ImportResult = { added: 0, skipped: 0, rejected: [] };
  const accepted: string[] = [];
  for (const [index, line] of lines.entries()) {
    const parsed = memoryTextSchema.safeParse(line);
    const guarded = parsed.success ? redactSecrets(parsed.data) : null;
    if (!parsed.success) result.rejected.push({ index, error: parsed.error.issues[0].message });
    else if (guarded!.onlySecret) result.rejected.push({ index, error: new SecretRefusedError().message });
    else accepted.push(guarded!.text);
  }
  const counts = await storeAll(
    u,
    accepted.map((text) => ({ text, source: "manual" as const, status: "pending" as const })),
    "Pasted from another assistant's memory list",
  );
  return { ...result, ...counts };
}

/** A list's lines without bullets or numbering, empty ones left out. */
function listLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*(?:[-*•·▪‣]|\d{1,3}[.)])\s+/, "").trim())
    .filter((l) => l.length > 0);
}

/** Where a memory came from when it was not learned in a Mnemo chat: shown on its card. */
export const CUSTOM_INSTRUCTIONS_REF = "chatgpt:custom-instructions";

export const CLAUDE_MEMORY_REF = "claude:memory";

export function memoryOrigin(sourceRef: string | null): string | null {
  if (sourceRef === `${CUSTOM_INSTRUCTIONS_REF}:about`) return "ChatGPT custom instructions: about you";
  if (sourceRef === `${CUSTOM_INSTRUCTIONS_REF}:answers`) return "ChatGPT custom instructions: how to answer";
  if (sourceRef === CLAUDE_MEMORY_REF) return "Claude's memory of you";
  return null;
}

/** A heading line of a markdown summary ("**Work context**", "## Personal"): it names a section, it states nothing. */
const HEADING = /^(#{1,6}\s+.*|\*\*[^*]+\*\*:?|__[^_]+__:?)$/;
/** At most this many statements from one summary. */
const MAX_STATEMENTS = 500;

/** A summary another app wrote about the user, as statements: headings left out, each sentence on its own. */
export function summaryStatements(summary: string): string[] {
  const sentences = new Intl.Segmenter("en", { granularity: "sentence" });
  const split = (line: string) => {
    const out: string[] = [];
    for (const { segment } of sentences.segment(line)) {
      // ICU ends a sentence after a title's abbreviation ("Dr.", "Mrs."): such a fragment joins the next one.
      const last = out.at(-1);
      if (last !== undefined && /^\S{1,4}\.$/.test(last)) out[out.length - 1] = `${last} ${segment.trim()}`;
      else out.push(segment.trim());
    }
    return out;
  };
  return listLines(summary)
    .filter((line) => !HEADING.test(line))
    .flatMap(split)
    .filter((s) => /\p{L}/u.test(s))
    .slice(0, MAX_STATEMENTS);
}

/**
 * Claude's memory from its export (a summary of the user in markdown), as memories waiting for review: a
 * statement each, in the place it was kept for (all chats, or the project). Claude wrote it, not the user: the
 * user approves each one.
 */
export async function importClaudeMemory(u: UserContext, summary: string): Promise<{ added: number; skipped: number }> {
  const batch = reviewBatch();
  batch.add(summaryStatements(summary), { kind: "fact", source: "inferred", sourceRef: CLAUDE_MEMORY_REF });
  return batch.store(u, "From Claude's memory (imported)");
}

/**
 * The custom instructions found in a ChatGPT export, as memories waiting for review: what the user wrote about
 * themselves (facts) and how they want answers (preferences), a line each, linked to a conversation that carried
 * them. The user's most deliberate memory, but written for another app: the user approves each line.
 */
export async function importCustomInstructions(
  u: UserContext,
  found: { about: string | null; howToRespond: string | null; threadId: string | null },
): Promise<{ added: number; skipped: number }> {
  const batch = reviewBatch();
  const from = (part: "about" | "answers") => ({
    source: "explicit" as const,
    sourceThreadId: found.threadId,
    sourceRef: `${CUSTOM_INSTRUCTIONS_REF}:${part}`,
  });
  batch.add(listLines(found.about ?? ""), { kind: "fact", ...from("about") });
  batch.add(listLines(found.howToRespond ?? ""), { kind: "preference", ...from("answers") });
  return batch.store(u, "From your ChatGPT custom instructions (imported)");
}

/**
 * What another app kept about the user, gathered as memories waiting for review: each line checked like a memory
 * the user types (length, secrets); one that fails is counted as skipped, not stored.
 */
function reviewBatch() {
  const memories: NewMemory[] = [];
  let skipped = 0;
  return {
    add(lines: string[], as: Omit<NewMemory, "text" | "status">) {
      for (const line of lines) {
        const parsed = memoryTextSchema.safeParse(line);
        const guarded = parsed.success ? redactSecrets(parsed.data) : null;
        if (!guarded || guarded.onlySecret) skipped++;
        else memories.push({ ...as, text: guarded.text, status: "pending" });
      }
    },
    async store(u: UserContext, reason: string): Promise<{ added: number; skipped: number }> {
      if (!memories.length) return { added: 0, skipped };
      const counts = await storeAll(u, memories, reason);
      return { added: counts.added, skipped: skipped + counts.skipped };
    },
  };
}

/**
 * Writes checked memories in one transaction. addMemory returns the existing
 * memory for a duplicate, so the counts say what was actually stored: a repeat
 * of a memory the user has, or of an earlier line, counts as skipped.
 */
async function storeAll(
  u: UserContext,
  memories: Array<NewMemory & { project?: ImportedProject | null }>,
  reason: string,
): Promise<{ added: number; skipped: number }> {
  const { db, userId } = u;
  let added = 0;
  let skipped = 0;
  await db.$transaction(
    async (tx) => {
      const before = new Set((await tx.memory.findMany({ where: { userId }, select: { id: true } })).map((r) => r.id));
      const inTx = onHandle(u, tx as Db);
      const projectIds = new Map<string, string>();
      for (const { project, ...m } of memories) {
        if (project && !projectIds.has(project.ref)) projectIds.set(project.ref, await importedProject(inTx, project));
        const into = project ? inMemoryScope(inTx, exactScope(projectIds.get(project.ref)!)) : inTx;
        const stored = await addMemory(into, m, "user", reason);
        if (before.has(stored.id)) skipped++;
        else {
          before.add(stored.id);
          added++;
        }
      }
    },
    { timeout: 300_000, maxWait: 30_000 },
  );
  return { added, skipped };
}
