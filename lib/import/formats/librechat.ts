// LibreChat's conversation export (JSON, client/src/hooks/Conversations/useExportConversation.ts):
// {conversationId, endpoint, title, exportAt, branches, recursive, options?} and the messages in one of three layouts:
// - `messages`, a flat list linked by parentMessageId (the shown branch, or every branch with "branches");
// - `messages`, nested under each message's `children` (older exports with "recursive");
// - `messagesTree`, the same nesting (current exports with "recursive").
// A message's words are in `text`, or, for agents, in `content` parts: text, think (reasoning, left out),
// tool_call (a tool note), images and errors. Older reasoning models wrote `:::thinking … :::` into the text.
import {
  pruneTree,
  SkipConversation,
  splitMessage,
  str,
  text,
  toDate,
  toolNote,
  type ImportedConversation,
  type ImportedFeedback,
  type ImportedMessage,
  type MessagePart,
} from "../conversation";
import { feedbackComment, ratingOf, tagWords } from "../feedback";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
type Node = ImportedMessage & { keep: boolean };

export const isLibreChat = (v: Obj) =>
  (Array.isArray(v.messages) || Array.isArray(v.messagesTree)) && ("conversationId" in v || "endpoint" in v);

const THINKING = /:::thinking[\s\S]*?(?:\n:::|$)/g;
const textOf = (v: unknown) =>
  typeof v === "string" ? v : typeof obj(v).value === "string" ? String(obj(v).value) : "";
const json = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

function toolPart(p: Obj): MessagePart {
  const call = obj(p.tool_call);
  const fn = obj(call.function);
  const code = obj(call.code_interpreter);
  const name =
    str(call.name) ?? str(fn.name) ?? (Object.keys(code).length ? "code_interpreter" : str(call.type)) ?? "tool";
  const args = json(call.args ?? fn.arguments ?? code.input);
  const output = call.output ?? fn.output ?? (Array.isArray(code.outputs) ? code.outputs : undefined);
  return {
    role: "tool",
    toolName: name.slice(0, 64),
    content: toolNote(args, output === undefined ? null : json(output)),
  };
}

/** A message's parts in order; reasoning and errors left out. */
function parts(m: Obj, user: boolean): MessagePart[] {
  const role = "assistant" as const; // a user message joins its parts back into one (see parseLibreChat)
  if (Array.isArray(m.content) && m.content.length) {
    const out: MessagePart[] = [];
    for (const p of m.content.map(obj)) {
      if (p.type === "text") out.push({ role, content: textOf(p.text).replace(THINKING, "") });
      else if (p.type === "tool_call" && !user) out.push(toolPart(p));
      else if (p.type === "image_file" || p.type === "image_url") out.push({ role, content: "[image not imported]" });
      // think (reasoning), error, agent_update and the rest are not part of the conversation's words
    }
    if (out.some((p) => p.content.trim())) return out;
  }
  return [{ role, content: textOf(m.text).replace(THINKING, "") }];
}

/** The files a user's message came with (`files`: {filename, type}): named, the export has no contents. */
function filesNoted(m: Obj): string[] {
  return (Array.isArray(m.files) ? m.files : [])
    .map(obj)
    .slice(0, 100)
    .map((f) => {
      const name = text(f.filename);
      if (String(f.type ?? "").startsWith("image/")) return `[image${name ? ` ${name}` : ""} not imported]`;
      return `[File ${name || "(unnamed)"} not imported: the export has no file contents]`;
    });
}

/** Every message, with the parent it was nested under (nesting wins over parentMessageId, as LibreChat's importer). */
function flatten(list: unknown[], parent: string | null, out: Array<{ m: Obj; parent: string | null }>) {
  for (const raw of list) {
    const m = obj(raw);
    out.push({ m, parent });
    if (Array.isArray(m.children) && m.children.length) flatten(m.children, str(m.messageId), out);
  }
  return out;
}

/** LibreChat shows the newest sibling at each fork: the last child, from the last root down. */
function shownLeaf(nodes: Array<{ ref: string; parentRef: string | null }>): string | null {
  const refs = new Set(nodes.map((n) => n.ref));
  const children = new Map<string | null, string[]>();
  for (const n of nodes) {
    const p = n.parentRef !== null && refs.has(n.parentRef) ? n.parentRef : null;
    const list = children.get(p) ?? [];
    list.push(n.ref);
    children.set(p, list);
  }
  const seen = new Set<string>();
  let at: string | null = children.get(null)?.at(-1) ?? null;
  while (at !== null && !seen.has(at)) {
    seen.add(at);
    const next = children.get(at)?.at(-1);
    if (next === undefined) return at;
    at = next;
  }
  return at;
}

export function parseLibreChat(c: Obj): ImportedConversation {
  const ref = str(c.conversationId);
  if (!ref) throw new SkipConversation("it has no conversationId");
  const list = (Array.isArray(c.messagesTree) ? c.messagesTree : c.messages) as unknown[];
  const all = flatten(list, null, []);
  const nodes: Node[] = all.map(({ m, parent }, i) => {
    const user = m.isCreatedByUser === true;
    return {
      ref: str(m.messageId) ?? `${ref}:${i}`,
      parentRef: parent ?? str(m.parentMessageId),
      role: user ? "user" : "assistant",
      content: "",
      createdAt: toDate(m.createdAt),
      model: user ? undefined : (str(m.model) ?? undefined),
      interrupted: !user && m.unfinished === true,
      keep: m.error !== true,
    };
  });
  const active = shownLeaf(nodes);
  const expanded = nodes.flatMap((n, i) => {
    const user = n.role === "user";
    const ps = parts(all[i].m, user);
    if (user) {
      const body = text([...ps.map((p) => p.content), ...filesNoted(all[i].m)].join("\n\n")).trim();
      return [{ ...n, content: body, keep: n.keep && !!body }];
    }
    return n.keep ? splitMessage(n, ps) : [n];
  });
  const { messages, activeRef, dropped } = pruneTree(expanded, active);
  const feedback = all.flatMap(({ m }, i) => rated(nodes[i].ref, obj(m.feedback)));
  return {
    format: "librechat",
    ref: `librechat:${ref}`,
    title: text(c.title) || null,
    createdAt: toDate(c.createdAt) ?? messages[0]?.createdAt ?? null,
    updatedAt: toDate(c.updatedAt),
    messages,
    activeRef,
    dropped,
    feedback,
  };
}

/** A message's `feedback`: {rating: "thumbsUp" | "thumbsDown", tag (a key, or {key, label}), text}. */
function rated(messageRef: string, fb: Obj): ImportedFeedback[] {
  const rating = ratingOf(fb.rating);
  if (rating === null) return [];
  const tag = typeof fb.tag === "string" ? fb.tag : (str(obj(fb.tag).key) ?? str(obj(fb.tag).label));
  const comment = feedbackComment(tag ? [tagWords(tag)] : [], fb.text);
  return [{ messageRef, kind: "rating", rating, comment, at: null }];
}
