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
};

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

/**
 * Drops the messages `keep` refuses, linking their children to the nearest kept
 * ancestor, and orders the rest parents-first (siblings by time). Also moves
 * the active message up to a kept one.
 */
export function pruneTree(
  all: Array<ImportedMessage & { keep: boolean }>,
  activeRef: string | null,
): { messages: ImportedMessage[]; activeRef: string | null } {
  const byRef = new Map(all.map((m) => [m.ref, m]));
  const keptAncestor = (ref: string | null): string | null => {
    const seen = new Set<string>();
    while (ref !== null) {
      const m = byRef.get(ref);
      if (!m || seen.has(ref)) return null; // a dangling or cyclic link: start a root
      if (m.keep) return ref;
      seen.add(ref);
      ref = m.parentRef;
    }
    return null;
  };
  const kept = all.filter((m) => m.keep).map(({ keep: _k, ...m }) => ({ ...m, parentRef: keptAncestor(m.parentRef) }));
  const children = new Map<string | null, ImportedMessage[]>();
  for (const m of kept) {
    const list = children.get(m.parentRef) ?? [];
    list.push(m);
    children.set(m.parentRef, list);
  }
  const time = (m: ImportedMessage) => m.createdAt?.getTime() ?? 0;
  const ordered: ImportedMessage[] = [];
  const queue = [...(children.get(null) ?? [])].sort((a, b) => time(a) - time(b));
  while (queue.length) {
    const m = queue.shift()!;
    ordered.push(m);
    queue.push(...(children.get(m.ref) ?? []).sort((a, b) => time(a) - time(b)));
  }
  let active = activeRef !== null && byRef.has(activeRef) ? keptAncestor(activeRef) : null;
  // No usable pointer: the newest message, so the last thing said is shown.
  if (active === null && ordered.length) active = [...ordered].sort((a, b) => time(b) - time(a))[0].ref;
  return { messages: ordered, activeRef: active };
}

/** Links a list in order (for apps whose export has no tree). */
export function chain(messages: Array<Omit<ImportedMessage, "parentRef">>): ImportedMessage[] {
  return messages.map((m, i) => ({ ...m, parentRef: i ? messages[i - 1].ref : null }));
}
