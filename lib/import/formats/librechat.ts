// LibreChat's conversation export (JSON): {conversationId, title, endpoint,
// messages[]}, where messages are either a flat list linked by
// parentMessageId or, with "recursive", nested under `children`.
import {
  pruneTree,
  SkipConversation,
  str,
  text,
  toDate,
  type ImportedConversation,
  type ImportedMessage,
} from "../conversation";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});

export const isLibreChat = (v: Obj) => Array.isArray(v.messages) && ("conversationId" in v || "endpoint" in v);

function content(m: Obj): string {
  if (Array.isArray(m.content) && m.content.length) {
    const parts = m.content
      .map(obj)
      .map((p) => (p.type === "text" ? (typeof p.text === "string" ? text(p.text) : text(obj(p.text).value)) : ""));
    const joined = parts.filter(Boolean).join("\n\n");
    if (joined) return joined;
  }
  return text(m.text);
}

/** Flattens the recursive layout (children nested in their parent). */
function flatten(list: unknown[], out: Obj[] = []): Obj[] {
  for (const raw of list) {
    const m = obj(raw);
    out.push(m);
    if (Array.isArray(m.children)) flatten(m.children, out);
  }
  return out;
}

export function parseLibreChat(c: Obj): ImportedConversation {
  const ref = str(c.conversationId);
  if (!ref) throw new SkipConversation("it has no conversationId");
  const all = flatten(c.messages as unknown[]);
  const nodes: Array<ImportedMessage & { keep: boolean }> = all.map((m, i) => {
    const body = content(m);
    const user = m.isCreatedByUser === true;
    return {
      ref: str(m.messageId) ?? `${ref}:${i}`,
      parentRef: str(m.parentMessageId),
      role: user ? "user" : "assistant",
      content: body,
      createdAt: toDate(m.createdAt),
      model: user ? undefined : (str(m.model) ?? undefined),
      interrupted: !user && m.unfinished === true,
      keep: !!body.trim() && m.error !== true,
    };
  });
  const { messages, activeRef, dropped } = pruneTree(nodes, null);
  return {
    format: "librechat",
    ref: `librechat:${ref}`,
    title: text(c.title) || null,
    createdAt: toDate(c.createdAt) ?? messages[0]?.createdAt ?? null,
    updatedAt: toDate(c.updatedAt),
    messages,
    activeRef,
    dropped,
  };
}
