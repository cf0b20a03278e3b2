// Mnemo's own full export (docs/export.md): each entry of `threads` is
// {thread, items, summaries}; items keep every branch through parentId.
// Summaries are not imported (they are recomputed from the items). The answers' ratings and corrections, in the
// export's `feedback`, come back on the same answers.
import { z } from "zod";
import {
  pruneTree,
  SkipConversation,
  str,
  text,
  toDate,
  type ImportedConversation,
  type ImportedFile,
  type ImportedMessage,
  type ImportedProject,
  type ImportedSideFeedback,
} from "../conversation";
import { feedbackComment, ratingOf } from "../feedback";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});

const toolCallsSchema = z
  .array(z.object({ id: z.string().max(200), name: z.string().max(200), arguments: z.string().max(100_000) }))
  .max(50);

export function parseMnemoThread(entry: Obj): ImportedConversation {
  const t = obj(entry.thread);
  const id = str(t.id);
  if (!id) throw new SkipConversation("it has no thread id");
  if (t.temporary === true) throw new SkipConversation("it is a temporary chat");
  const items = (Array.isArray(entry.items) ? entry.items : []).map(obj);
  const nodes = items.map((i) => {
    const role: ImportedMessage["role"] | null =
      i.role === "user" || i.role === "assistant" || i.role === "tool" ? i.role : null;
    const calls = toolCallsSchema.safeParse(i.toolCalls);
    return {
      ref: str(i.id) ?? "",
      parentRef: str(i.parentId),
      role: role ?? "user",
      content: text(i.content),
      createdAt: toDate(i.createdAt),
      toolName: str(i.toolName)?.slice(0, 64),
      toolCalls: calls.success && calls.data.length ? calls.data : undefined,
      toolCallId: str(i.toolCallId)?.slice(0, 200),
      interrupted: i.status === "interrupted" || i.status === "streaming",
      model: str(i.model)?.slice(0, 200),
      keep: !!role && !!str(i.id),
    };
  });
  const { messages, activeRef, dropped } = pruneTree(nodes, str(t.activeLeafId));
  return {
    format: "mnemo",
    ref: `mnemo:${id}`,
    sameAs: id,
    title: text(t.title) || null,
    createdAt: toDate(t.createdAt),
    updatedAt: toDate(t.lastActivityAt) ?? toDate(t.updatedAt),
    messages,
    activeRef,
    archived: t.archived === true,
    dropped,
    // Named from the export's "projects" (read before its threads) by lib/import/run.ts.
    project: str(t.projectId) ? { ref: `mnemo:${str(t.projectId)}`, name: "", sameAs: str(t.projectId)! } : undefined,
  };
}

/** One entry of the export's "projects". */
export function parseMnemoProject(v: unknown): ImportedProject | null {
  const p = obj(v);
  const id = str(p.id);
  const name = text(p.name).trim().slice(0, 80);
  if (!id || !name) return null;
  return {
    ref: `mnemo:${id}`,
    sameAs: id,
    name,
    instructions: text(p.instructions).slice(0, 4000),
    memoryMode: p.memoryMode === "project_only" ? "project_only" : "shared",
  };
}

/** One entry of the export's "feedback": {threadId, itemId, kind: "rating" | "correction", rating, comment}. */
export function parseMnemoFeedback(v: unknown): ImportedSideFeedback | null {
  const f = obj(v);
  const threadId = str(f.threadId);
  const itemId = str(f.itemId);
  const kind = f.kind === "rating" || f.kind === "correction" ? f.kind : null;
  if (!threadId || !itemId || !kind) return null;
  const rating = kind === "rating" ? ratingOf(f.rating) : null;
  const comment = feedbackComment([], f.comment);
  if (kind === "rating" ? rating === null : !comment) return null;
  return {
    conversationRefs: [`mnemo:${threadId}`],
    sameAs: threadId,
    messageRef: itemId,
    kind,
    rating,
    comment,
    at: toDate(f.createdAt),
  };
}

/** A file of the export's `attachments`, sent with a message (a draft never sent has no message: left out). */
export function parseMnemoFile(v: unknown): ImportedFile | null {
  const a = obj(v);
  const threadId = str(a.threadId);
  const itemId = str(a.itemId);
  if (!threadId || !itemId || typeof a.data !== "string") return null;
  return {
    conversationRef: `mnemo:${threadId}`,
    messageRef: itemId,
    name: text(a.name) || "file",
    bytes: Buffer.from(a.data, "base64"),
  };
}
