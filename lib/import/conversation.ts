// One imported conversation, whatever app it came from: a tree of messages
// (parents listed before their children) and the branch that was shown.
// Each format module turns its app's export into this; lib/import/write.ts
// stores it as a Mnemo thread.
import { cleanText } from "@/lib/text/policy";

export type ImportFormat = "chatgpt" | "claude" | "open-webui" | "librechat" | "mnemo";

export const FORMAT_NAMES: Record<ImportFormat, string> = {
  chatgpt: "ChatGPT",
  claude: "Claude",
  "open-webui": "Open WebUI",
  librechat: "LibreChat",
  mnemo: "Mnemo",
};

export type ImportedMessage = {
  /** The message's id in the other app (kept as the item's sourceRef). */
  ref: string;
  parentRef: string | null;
  role: "user" | "assistant" | "tool";
  content: string;
  createdAt: Date | null;
  toolName?: string;
  /** Only Mnemo's own export carries real tool calls (other apps' tools become notes). */
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  toolCallId?: string;
  interrupted?: boolean;
  model?: string;
  /** Files the message came with whose text the export holds (stored as the message's attachments). */
  attachments?: Array<{ name: string; text: string }>;
  /**
   * Files the message names whose bytes a zip may carry beside the conversations (ChatGPT's uploads and pictures):
   * the export's id for it, its name when known, and the note its content has for it until the file is found.
   */
  fileRefs?: FileRef[];
};

export type FileRef = { ref: string; name: string | null; note: string };

/** A file the export carries whole (Mnemo's own export), attached to one message of one of its conversations. */
export type ImportedFile = {
  /** The conversation's ref (as ImportedConversation.ref) and the message's (as ImportedMessage.ref). */
  conversationRef: string;
  messageRef: string;
  name: string;
  bytes: Uint8Array;
};

export type ImportedConversation = {
  format: ImportFormat;
  /** The conversation's id in the other app: a second import of it adds nothing. */
  ref: string;
  title: string | null;
  createdAt: Date | null;
  updatedAt: Date | null;
  messages: ImportedMessage[];
  /** The message the other app showed last (its branch becomes the active one). */
  activeRef: string | null;
  archived?: boolean;
  /** Mnemo's own export: the thread's id, so importing it back into the same account adds nothing. */
  sameAs?: string;
  /** Messages left out of an otherwise good conversation (repeated ids, cycles), by reason. */
  dropped?: DroppedMessages;
  /** What the user told the other app about themselves and how to answer (ChatGPT's custom instructions). */
  customInstructions?: CustomInstructions;
  /** The project the conversation belonged to there: it lands in a Mnemo project of the same name. */
  project?: ImportedProject;
  /** The user's ratings of answers there, for apps that keep them on the messages (LibreChat, Open WebUI). */
  feedback?: ImportedFeedback[];
};

/** A 👍/👎 (or, from Mnemo's own export, a correction) the user gave one answer in the other app. */
export type ImportedFeedback = {
  /** The rated answer's id there (an imported item's sourceRef). */
  messageRef: string;
  kind: "rating" | "correction";
  rating: 1 | -1 | null;
  comment: string | null;
  at: Date | null;
};

/** Feedback kept apart from the conversations (ChatGPT's message_feedback.json, Mnemo's export): found by their ids. */
export type ImportedSideFeedback = ImportedFeedback & {
  /** The conversation's import refs it may have been stored under (as ImportedConversation.ref). */
  conversationRefs: string[];
  /** Mnemo's own export: the thread's id, for feedback imported back into the same account. */
  sameAs?: string;
};

export type ImportedProject = {
  /** The project's id in the other app (a second import finds the same Mnemo project). */
  ref: string;
  name: string;
  instructions?: string;
  memoryMode?: "shared" | "project_only";
  /** Mnemo's own export: the project's id, so importing it back into the same account reuses it. */
  sameAs?: string;
  /** The file has no name for it (ChatGPT): named after its first conversation until the user renames it. */
  nameless?: boolean;
};

/** A project a file lists on its own (Claude's projects.json, Mnemo's export), with what came in it. */
export type ListedProject = ImportedProject & {
  /** Claude's example project: left out unless a conversation was in it. */
  starter?: boolean;
  /** Its knowledge files, each as a thread of one message in the project. */
  documents?: ImportedConversation[];
};

export type CustomInstructions = { about: string | null; howToRespond: string | null };

/** Why a conversation with nothing to import is left out. */
export const EMPTY_CONVERSATION = "empty conversation (no messages)";

/** A conversation this file holds but the import leaves out, and why. */
export class SkipConversation extends Error {}

/** Seconds or milliseconds since the epoch, or an ISO string, as a Date (null when absent or nonsense). */
export function toDate(v: unknown): Date | null {
  if (v === null || v === undefined || v === "") return null;
  let d: Date;
  if (typeof v === "number") d = new Date(v < 1e11 ? v * 1000 : v);
  else if (typeof v === "string") d = /^\d+(\.\d+)?$/.test(v) ? toDate(Number(v))! : new Date(v);
  else return null;
  const t = d.getTime();
  // Before 2000 or more than a day ahead: not a real message time.
  return Number.isFinite(t) && t > 946_684_800_000 && t < Date.now() + 86_400_000 ? d : null;
}

export const text = (v: unknown): string => (typeof v === "string" ? cleanText(v) : "");

export const str = (v: unknown): string | null =>
  typeof v === "string" && v.length ? v : typeof v === "number" ? String(v) : null;

/** More messages than any real conversation has: the file is refused rather than held in memory. */
export const MAX_MESSAGES_PER_CONVERSATION = 100_000;

/** Messages a format's tree had but the import left out, by reason (duplicate ids, cycles). */
export type DroppedMessages = Record<string, number>;

/**
 * Drops the messages `keep` refuses, linking their children to the nearest kept
 * ancestor, and orders the rest parents-first (siblings by time). Also moves
 * the active message up to a kept one.
 *
 * Linear in the number of nodes whatever the file says: a repeated id keeps its
 * first node (the others are dropped), each node's nearest kept ancestor is
 * resolved once (a long hidden chain is walked once, not once per child), and
 * nodes that only lead back into a cycle are dropped. Both are counted in `dropped`.
 */
export function pruneTree(
  all: Array<ImportedMessage & { keep: boolean }>,
  activeRef: string | null,
): { messages: ImportedMessage[]; activeRef: string | null; dropped: DroppedMessages } {
  if (all.length > MAX_MESSAGES_PER_CONVERSATION)
    throw new SkipConversation(`it has more than ${MAX_MESSAGES_PER_CONVERSATION.toLocaleString("en-US")} messages`);
  const dropped: DroppedMessages = {};
  const drop = (reason: string, n = 1) => void (dropped[reason] = (dropped[reason] ?? 0) + n);
  const byRef = new Map<string, ImportedMessage & { keep: boolean }>();
  for (const m of all) {
    if (byRef.has(m.ref)) drop("a repeated message id");
    else byRef.set(m.ref, m);
  }

  // ref -> itself when kept, else its nearest kept ancestor (null: none, a dangling link or a hidden cycle).
  const resolved = new Map<string, string | null>();
  const keptSelfOrAncestor = (start: string | null): string | null => {
    const path: string[] = [];
    const onPath = new Set<string>();
    let ref = start;
    let found: string | null = null;
    while (ref !== null) {
      const known = resolved.get(ref);
      if (known !== undefined) {
        found = known;
        break;
      }
      const m = byRef.get(ref);
      if (!m || onPath.has(ref)) break; // dangling or cyclic: start a root
      if (m.keep) {
        found = ref;
        break;
      }
      onPath.add(ref);
      path.push(ref);
      ref = m.parentRef;
    }
    for (const p of path) resolved.set(p, found);
    return found;
  };

  const kept: ImportedMessage[] = [];
  for (const m of byRef.values()) {
    if (!m.keep) continue;
    const { keep: _k, ...rest } = m;
    kept.push({ ...rest, parentRef: keptSelfOrAncestor(m.parentRef) });
  }
  const children = new Map<string | null, ImportedMessage[]>();
  for (const m of kept) {
    const list = children.get(m.parentRef);
    if (list) list.push(m);
    else children.set(m.parentRef, [m]);
  }
  const time = (m: ImportedMessage) => m.createdAt?.getTime() ?? 0;
  const byTime = (a: ImportedMessage, b: ImportedMessage) => time(a) - time(b);
  // Breadth first from the roots; what is never reached hangs off a cycle of kept messages.
  const ordered: ImportedMessage[] = [...(children.get(null) ?? [])].sort(byTime);
  for (let i = 0; i < ordered.length; i++) ordered.push(...(children.get(ordered[i].ref) ?? []).sort(byTime));
  if (ordered.length < kept.length) drop("a cycle of replies", kept.length - ordered.length);

  const placed = new Set(ordered.map((m) => m.ref));
  let active = activeRef !== null && byRef.has(activeRef) ? keptSelfOrAncestor(activeRef) : null;
  if (active !== null && !placed.has(active)) active = null;
  // No usable pointer: the newest message, so the last thing said is shown.
  if (active === null && ordered.length) active = ordered.reduce((a, b) => (time(b) >= time(a) ? b : a)).ref;
  return { messages: ordered, activeRef: active, dropped };
}

/** Links a list in order (for apps whose export has no tree). */
export function chain(messages: Array<Omit<ImportedMessage, "parentRef">>): ImportedMessage[] {
  if (messages.length > MAX_MESSAGES_PER_CONVERSATION)
    throw new SkipConversation(`it has more than ${MAX_MESSAGES_PER_CONVERSATION.toLocaleString("en-US")} messages`);
  // A repeated id gets a suffix: the list's order, not its ids, makes the chain.
  const seen = new Map<string, number>();
  const unique = messages.map((m) => {
    const n = seen.get(m.ref) ?? 0;
    seen.set(m.ref, n + 1);
    return n ? { ...m, ref: `${m.ref}#${n + 1}` } : m;
  });
  return unique.map((m, i) => ({ ...m, parentRef: i ? unique[i - 1].ref : null }));
}

/** One part of a message that other apps store as a single text: its words, or a tool's call and result. */
export type MessagePart = { role: "assistant" | "tool"; content: string; toolName?: string };

/**
 * One message of another app that holds several parts (text, then a tool call, then more text) as a chain of
 * messages. The last part keeps the message's own ref, so its replies and the app's "shown" pointer still find it.
 */
export function splitMessage<T extends ImportedMessage & { keep: boolean }>(m: T, parts: MessagePart[]): T[] {
  const kept = parts.map((p) => ({ ...p, content: text(p.content).trim() })).filter((p) => p.content);
  if (kept.length <= 1) {
    const only = kept[0];
    return [only ? { ...m, role: only.role, content: only.content, toolName: only.toolName } : { ...m, keep: false }];
  }
  return kept.map((p, i) => ({
    ...m,
    ref: i === kept.length - 1 ? m.ref : `${m.ref}#part${i + 1}`,
    parentRef: i === 0 ? m.parentRef : `${m.ref}#part${i}`,
    role: p.role,
    content: p.content,
    toolName: p.toolName,
    interrupted: i === kept.length - 1 ? m.interrupted : false,
    model: p.role === "assistant" ? m.model : undefined,
  }));
}

/**
 * A work an answer made beside its words (a Claude artifact, a ChatGPT canvas, a created file), as the user saw it:
 * its title, then the document as it is or the code fenced (a fence longer than any inside it).
 */
export function work(title: string, content: string, language: string | null, markdown: boolean): string {
  const fence = "`".repeat(Math.max(3, ...[...content.matchAll(/`{3,}/g)].map((m) => m[0].length + 1)));
  const body = markdown ? content : `${fence}${language ?? ""}\n${content}\n${fence}`;
  return title ? `**${title}**\n\n${body}` : body;
}

/** A tool note's text: what was asked of the tool and what it answered (long results are cut). */
export function toolNote(args: string, result: string | null): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
  const lines = [];
  if (args.trim()) lines.push(`Call: ${cut(args.trim(), 2_000)}`);
  if (result !== null && result.trim()) lines.push(`Result: ${cut(result.trim(), 8_000)}`);
  return lines.join("\n\n");
}
