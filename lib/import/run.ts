// Imports a conversation export for one user: reads it as a stream
// (lib/import/read.ts), stores each conversation in its own transaction
// (lib/import/write.ts: a broken one is reported and skipped, the rest land),
// and reports what happened. Used by POST /api/import and `npm run import`.
import { inMemoryScope, type UserContext } from "@/lib/user-context";
import { exactScope } from "@/lib/projects/scope";
import { AppError, isDatabaseUnavailable } from "@/lib/errors";
import { embedSoon } from "@/lib/memory/embed";
import { importClaudeMemory, importCustomInstructions, importMemories } from "@/lib/memory/portable";
import { getConfig } from "@/lib/config";
import {
  FORMAT_NAMES,
  type CustomInstructions,
  type ImportFormat,
  type ImportedProject,
  type ListedProject,
  type ImportedSideFeedback,
  type ImportedFile,
  type FileRef,
} from "./conversation";
import { saveUpload } from "@/lib/attachments/store";
import { MAX_SIDE_FEEDBACK, storeSideFeedback } from "./feedback";
import { readExport, type ImportEntry } from "./read";
import { MAX_SIDE_BYTES, unzipIfNeeded, type SideFiles } from "./unzip";
import { withImportLock } from "./lock";
import { dropFileNote, importedProject, settleImportedProject, writeConversation } from "./write";
import { ASSET_NAMES, dropAssets, newZipAssets, readAsset, readAssetNames } from "./zip-assets";
import { nameAfterFirstConversation } from "./project-names";
import { claudePlaceholderName, type ClaudeMemory } from "./formats/claude";

export type SkipReason = { reason: string; count: number; examples: string[] };

export type ImportReport = {
  format: ImportFormat | "mixed" | null;
  conversations: number;
  messages: number;
  /** Edited or regenerated alternatives kept beside each conversation's main line. */
  branches: number;
  /** Conversations already imported before (a repeated import adds nothing). */
  duplicates: number;
  skipped: { count: number; reasons: SkipReason[] };
  /** Messages left out of imported conversations (repeated ids, reply cycles), by reason. */
  droppedMessages: { count: number; reasons: SkipReason[] };
  /** Projects the file lists (Claude's projects.json, Mnemo's export): made, or named when only their id was known. */
  projects?: { added: number; named: number };
  /** Projects the file has no names for (ChatGPT's), named after their first conversation: the names given. */
  projectsNamedAfterConversations?: string[];
  /** Knowledge files of the projects listed (Claude's `docs`), each stored as a thread of one message in its project. */
  projectDocuments?: number;
  /** Mnemo's own export also carries memories. */
  memories?: { added: number; skipped: number };
  /** ChatGPT's custom instructions, as memories waiting for review. */
  customInstructions?: { added: number; skipped: number };
  /** What Claude remembered about the user (its memories.json), as memories waiting for review. */
  claudeMemory?: { added: number; skipped: number };
  /** The user's 👍/👎 of answers there, now on the same answers here; unmatched: no imported answer had that id. */
  feedback?: { added: number; unmatched: number };
  /** Files the export carried whole (Mnemo's), back on their messages; those refused, by reason (a limit, a type). */
  files?: { added: number; refused: { count: number; reasons: SkipReason[] } };
  threadIds: string[];
  /** Set when the file broke off part of the way: what came before it is imported. */
  error?: string;
};

export type ImportProgress = Pick<ImportReport, "conversations" | "messages" | "duplicates"> & { skipped: number };

const MAX_MEMORIES = 5_000;
/** Files named by an import's messages that are looked for in its zip. */
const MAX_NAMED_FILES = 10_000;
const MAX_THREAD_IDS = 10_000;
const MAX_PROJECTS = 1_000;
const MAX_APP_MEMORIES = 100;
const MEMORY_STATUSES = new Set(["active", "pending", "archived", "past"]);

type ImportChunks = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

/** Imports one file for the user, refused (409) while another import of theirs runs (lib/import/lock.ts). */
export function importConversations(
  u: UserContext,
  chunks: ImportChunks,
  onProgress?: (p: ImportProgress) => void,
): Promise<ImportReport> {
  return withImportLock(u.db, u.userId, () => importFile(u, chunks, onProgress));
}

async function importFile(
  u: UserContext,
  chunks: ImportChunks,
  onProgress?: (p: ImportProgress) => void,
): Promise<ImportReport> {
  const { db, userId } = u;
  const report: ImportReport = {
    format: null,
    conversations: 0,
    messages: 0,
    branches: 0,
    duplicates: 0,
    skipped: { count: 0, reasons: [] },
    droppedMessages: { count: 0, reasons: [] },
    threadIds: [],
  };
  const formats = new Set<ImportFormat>();
  // The threads this import made, by their conversation's ref: a file of the export goes to its message there.
  const madeThreads = new Map<string, string>();
  // The files a zip carries beside its conversations, and the messages that name them (attached once it is read).
  const assets = newZipAssets();
  const named: Array<FileRef & { threadId: string; itemId: string }> = [];
  const memories: unknown[] = [];
  const claudeMemories: ClaudeMemory[] = [];
  const sideFeedback: ImportedSideFeedback[] = [];
  let inlineFeedback = 0;
  // Projects named by Mnemo's export, by ref; and the Mnemo project each became (memories follow them there).
  const projects = new Map<string, ListedProject>();
  const projectIds = new Map<string, string>();
  const nameless = new Set<string>();
  // Custom instructions repeat in every conversation: each distinct version once, with the first thread that had it.
  const instructions = new Map<string, CustomInstructions & { threadId: string | null }>();
  const noteInstructions = (ci: CustomInstructions | undefined, threadId: string | null) => {
    const key = ci && JSON.stringify([ci.about, ci.howToRespond]);
    if (ci && key && !instructions.has(key) && instructions.size < 100) instructions.set(key, { ...ci, threadId });
  };
  const cipher = u.cipher;
  const count = (tally: ImportReport["skipped"], reason: string, title: string | null, n = 1) => {
    tally.count += n;
    let r = tally.reasons.find((x) => x.reason === reason);
    if (!r) tally.reasons.push((r = { reason, count: 0, examples: [] }));
    r.count += n;
    if (title && r.examples.length < 3) r.examples.push(title.slice(0, 80));
  };
  const skip = (reason: string, title: string | null) => count(report.skipped, reason, title);

  try {
    await readAll();
  } catch (e) {
    const seen = report.conversations + report.duplicates + report.skipped.count;
    if (!(e instanceof AppError) || seen === 0) {
      dropAssets(assets);
      throw e;
    }
    report.error = e.message;
  }
  try {
    for (const ref of named) await attachZipFile(ref);
  } finally {
    dropAssets(assets);
  }

  report.format = formats.size === 1 ? [...formats][0] : formats.size > 1 ? "mixed" : null;
  const toName = new Map([...projectIds].filter(([ref]) => nameless.has(ref)));
  if (toName.size) report.projectsNamedAfterConversations = await nameAfterFirstConversation(u, toName);
  if (memories.length) report.memories = await importExportedMemories(u, memories, projects, projectIds);
  if (projects.size) {
    const { documents, ...settled } = await settleProjects(u, projects, projectIds);
    report.projects = settled;
    if (documents) report.projectDocuments = documents;
  }
  if (claudeMemories.length) report.claudeMemory = await importClaudeMemories(u, claudeMemories, projects);
  if (sideFeedback.length || inlineFeedback) {
    const side = sideFeedback.length ? await storeSideFeedback(u, sideFeedback) : { added: 0, unmatched: 0 };
    report.feedback = { added: side.added + inlineFeedback, unmatched: side.unmatched };
  }
  for (const found of instructions.values()) {
    const r = await importCustomInstructions(u, found);
    report.customInstructions = {
      added: (report.customInstructions?.added ?? 0) + r.added,
      skipped: (report.customInstructions?.skipped ?? 0) + r.skipped,
    };
  }
  const learned = report.memories?.added || report.customInstructions?.added || report.claudeMemory?.added;
  if (report.conversations || learned) await embedSoon(db, userId);
  return report;

  async function readAll() {
    const limits = { maxInflatedBytes: getConfig().import.maxBytes };
    const side: SideFiles = [];
    for await (const entry of readExport(unzipIfNeeded(chunks, limits, side, assets))) await take(entry);
    // Claude's projects.json and memories.json, ChatGPT's message_feedback.json, wherever they sat in the zip: only
    // projects, memory and ratings are taken.
    for (const file of side) {
      if (file.tooLarge) {
        skip(`${file.name.split("/").pop()} was over ${MAX_SIDE_BYTES / 1024 / 1024} MB: left out`, null);
        continue;
      }
      if (ASSET_NAMES.test(file.name)) {
        readAssetNames(assets, file.chunks);
        continue;
      }
      for await (const entry of readExport(file.chunks))
        if (entry.kind === "project" || entry.kind === "app-memory" || entry.kind === "feedback") await take(entry);
    }
  }

  async function take(entry: ImportEntry) {
    if (entry.kind === "project") {
      if (entry.project && projects.size < MAX_PROJECTS) projects.set(entry.project.ref, entry.project);
      return;
    }
    if (entry.kind === "feedback") {
      if (entry.feedback && sideFeedback.length < MAX_SIDE_FEEDBACK) sideFeedback.push(entry.feedback);
      return;
    }
    if (entry.kind === "app-memory") {
      if (claudeMemories.length < MAX_APP_MEMORIES) claudeMemories.push(entry.memory);
      return;
    }
    if (entry.kind === "file") {
      if (entry.file) await takeFile(entry.file);
      return;
    }
    if (entry.kind === "memory") {
      if (memories.length < MAX_MEMORIES) memories.push(entry.memory);
      else skip(`more than ${MAX_MEMORIES.toLocaleString("en-US")} memories`, null);
      return;
    }
    if (entry.kind === "skipped") {
      if (entry.format) formats.add(entry.format);
      noteInstructions(entry.customInstructions, null);
      skip(entry.reason, entry.title);
    } else {
      const conv = entry.conversation;
      formats.add(conv.format);
      // Mnemo's export names its projects once, ahead of the threads; a thread carries the id.
      if (conv.project && !conv.project.name) conv.project = projects.get(conv.project.ref);
      for (const [reason, n] of Object.entries(conv.dropped ?? {}))
        count(report.droppedMessages, reason, conv.title, n);
      try {
        const r = await writeConversation(db, userId, conv, cipher);
        if (r.status === "imported" && r.projectId && conv.project) {
          projectIds.set(conv.project.ref, r.projectId);
          if (conv.project.nameless) nameless.add(conv.project.ref);
        }
        if (r.status === "imported") {
          inlineFeedback += r.feedback;
          madeThreads.set(conv.ref, r.threadId);
          for (const f of r.fileRefs) if (named.length < MAX_NAMED_FILES) named.push({ ...f, threadId: r.threadId });
        }
        noteInstructions(conv.customInstructions, r.status === "imported" ? r.threadId : null);
        if (r.status === "duplicate") report.duplicates++;
        else {
          report.conversations++;
          report.messages += r.messages;
          report.branches += r.branches;
          if (report.threadIds.length < MAX_THREAD_IDS) report.threadIds.push(r.threadId);
        }
      } catch (e) {
        if (isDatabaseUnavailable(e)) throw e; // nothing after this would land either
        console.error(
          `[import] a ${FORMAT_NAMES[conv.format]} conversation could not be stored:`,
          (e as Error)?.message,
        );
        skip("it could not be stored", conv.title);
      }
    }
    progress();
  }

  /** A file the zip carried, on the message that named it, its note gone from the message. */
  async function attachZipFile(ref: FileRef & { threadId: string; itemId: string }) {
    const found = readAsset(assets, ref.ref);
    if (found === "missing") return; // not in what was given (conversations.json alone): the note stays
    report.files ??= { added: 0, refused: { count: 0, reasons: [] } };
    if (found === "too large") {
      count(report.files.refused, "over the size limit for a file", ref.name);
      return;
    }
    try {
      await saveUpload(u, found.name ?? ref.name ?? ref.ref, found.bytes, {
        threadId: ref.threadId,
        itemId: ref.itemId,
      });
      await dropFileNote(db, cipher, ref.itemId, ref.note);
      report.files.added++;
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      count(report.files.refused, e.message, ref.name);
    }
  }

  /**
   * A file back on its message, checked and stored as an upload is (its type from its bytes, the admin's limits).
   * Only into threads this import made: a conversation already here has its files.
   */
  async function takeFile(file: ImportedFile) {
    const threadId = madeThreads.get(file.conversationRef);
    if (!threadId) return;
    const item = await db.item.findFirst({ where: { threadId, sourceRef: file.messageRef }, select: { id: true } });
    if (!item) return;
    report.files ??= { added: 0, refused: { count: 0, reasons: [] } };
    try {
      await saveUpload(u, file.name, file.bytes, { threadId, itemId: item.id });
      report.files.added++;
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      count(report.files.refused, e.message, file.name);
    }
  }

  function progress() {
    onProgress?.({
      conversations: report.conversations,
      messages: report.messages,
      duplicates: report.duplicates,
      skipped: report.skipped.count,
    });
  }
}

/**
 * The projects the file listed that no thread or memory brought in: Claude's projects.json (its starter project
 * left out unless a conversation was in it), a Mnemo project left empty. Those already made get their names.
 */
async function settleProjects(u: UserContext, projects: Map<string, ListedProject>, projectIds: Map<string, string>) {
  const out = { added: 0, named: 0, documents: 0 };
  for (const [ref, p] of projects) {
    if (p.starter && !projectIds.has(ref)) continue;
    const claudeId = ref.startsWith("claude:") ? ref.slice("claude:".length) : null;
    const r = await settleImportedProject(u, p, claudeId ? claudePlaceholderName(claudeId) : null);
    if (r !== "kept") out[r]++;
    // Its knowledge files (never the starter project's: Anthropic's examples), each once however often imported.
    if (p.starter) continue;
    for (const doc of p.documents ?? []) {
      const w = await writeConversation(u.db, u.userId, { ...doc, project: p }, u.cipher);
      if (w.status === "imported") out.documents++;
    }
  }
  return out;
}

/** Claude's memory: the general summary in general memory, each project's in that project (made when missing). */
async function importClaudeMemories(
  u: UserContext,
  found: ClaudeMemory[],
  projects: Map<string, ImportedProject>,
): Promise<{ added: number; skipped: number }> {
  const out = { added: 0, skipped: 0 };
  const add = (r: { added: number; skipped: number }) => {
    out.added += r.added;
    out.skipped += r.skipped;
  };
  for (const m of found) {
    if (m.general) add(await importClaudeMemory(inMemoryScope(u, exactScope(null)), m.general));
    for (const p of m.projects) {
      const project = projects.get(p.ref) ?? { ref: p.ref, name: claudePlaceholderName(p.ref.slice("claude:".length)) };
      const projectId = await importedProject(u, project);
      add(await importClaudeMemory(inMemoryScope(u, exactScope(projectId)), p.text));
    }
  }
  return out;
}

/**
 * Memories from Mnemo's full export, through the memories import (duplicates of what the user has are skipped),
 * each into its project: the one its threads landed in, else one made for it.
 */
async function importExportedMemories(
  u: UserContext,
  rows: unknown[],
  projects: Map<string, ImportedProject>,
  projectIds: Map<string, string>,
) {
  const valid = rows
    .map((r) => (r && typeof r === "object" ? (r as Record<string, unknown>) : {}))
    .filter((m) => typeof m.text === "string" && MEMORY_STATUSES.has(String(m.status ?? "active")));
  const byProject = new Map<string | null, Array<Record<string, unknown>>>();
  for (const m of valid) {
    const ref = typeof m.projectId === "string" ? `mnemo:${m.projectId}` : null;
    const key = ref && projects.has(ref) ? ref : null;
    byProject.set(key, [...(byProject.get(key) ?? []), m]);
  }
  let added = 0;
  let skipped = rows.length - valid.length;
  for (const [ref, group] of byProject) {
    const projectId = ref ? (projectIds.get(ref) ?? (await importedProject(u, projects.get(ref)!))) : null;
    const memories = group.map((m) => ({
      text: m.text,
      kind: m.kind ?? "fact",
      status: m.status ?? "active",
      pinned: m.pinned === true,
      validFrom: m.validFrom,
      validUntil: m.validUntil,
      muted: m.muted === true,
      private: m.private === true,
      expiresAt: m.expiresAt,
    }));
    const r = await importMemories(inMemoryScope(u, exactScope(projectId)), {
      format: "mnemo-memories",
      version: 1,
      memories,
    });
    added += r.added;
    skipped += r.skipped + r.rejected.length;
  }
  return { added, skipped };
}
