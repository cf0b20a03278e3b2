// ChatGPT's data export (conversations.json): an array of conversations, each a
// `mapping` of nodes {id, message, parent, children} with `current_node` the
// message shown last. Edits and regenerations are sibling branches.
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

export const isChatGpt = (v: Obj) => typeof v.mapping === "object" && v.mapping !== null;

/** Text of one content part: strings as they are; images, audio and files as a short note. */
function partText(p: unknown): string {
  if (typeof p === "string") return text(p);
  const o = obj(p);
  if (typeof o.text === "string") return text(o.text); // audio transcriptions, text parts
  const type = str(o.content_type) ?? "attachment";
  if (type.includes("image")) return "[image not imported]";
  if (type.includes("audio")) return "[audio not imported]";
  return `[${type.replace(/_/g, " ")} not imported]`;
}

/** A message's content as text (code fenced, browsing results and quotes as plain text), or null to skip it. */
function contentText(content: Obj): string | null {
  const type = str(content.content_type) ?? "text";
  const parts = Array.isArray(content.parts) ? content.parts : [];
  switch (type) {
    case "text":
    case "multimodal_text":
      return parts.map(partText).filter(Boolean).join("\n\n");
    case "code":
      return (
        "```" +
        (str(content.language) && content.language !== "unknown" ? content.language : "") +
        "\n" +
        text(content.text) +
        "\n```"
      );
    case "execution_output":
      return text(content.text);
    case "tether_browsing_display":
      return [text(content.summary), text(content.result)].filter(Boolean).join("\n\n");
    case "tether_quote":
      return [text(content.title), text(content.url), text(content.text)].filter(Boolean).join("\n");
    case "thoughts":
    case "reasoning_recap":
    case "user_editable_context":
    case "model_editable_context":
    case "system_error":
      return null; // hidden reasoning, custom instructions and memory bookkeeping are not part of the chat
    default:
      return parts.length ? parts.map(partText).filter(Boolean).join("\n\n") : text(content.text) || null;
  }
}

/** Citations kept as text under the answer (the links themselves are never fetched). */
function citations(meta: Obj): string {
  const list = Array.isArray(meta.citations) ? meta.citations : [];
  const lines = list
    .map((c) => obj(obj(c).metadata))
    .map((m) => [text(m.title), text(m.url)].filter(Boolean).join(" — "))
    .filter(Boolean);
  return [...new Set(lines)].length ? `\n\nSources:\n${[...new Set(lines)].map((l) => `- ${l}`).join("\n")}` : "";
}

function toMessage(id: string, node: Obj): ImportedMessage & { keep: boolean } {
  const msg = obj(node.message);
  const meta = obj(msg.metadata);
  const role = str(obj(msg.author).role);
  const base = {
    ref: id,
    parentRef: str(node.parent),
    createdAt: toDate(msg.create_time),
    content: "",
    role: "user" as const,
    keep: false,
  };
  if (!node.message || meta.is_visually_hidden_from_conversation === true) return base;
  if (role !== "user" && role !== "assistant" && role !== "tool") return base; // system prompts are hidden in ChatGPT too
  const content = contentText(obj(msg.content));
  if (content === null || !content.trim()) return base;
  const recipient = str(msg.recipient);
  const finish = str(obj(meta.finish_details).type);
  // Tool output, and the assistant's own calls to a tool (recipient "browser", "python", ...), become tool notes.
  if (role === "tool" || (role === "assistant" && recipient && recipient !== "all")) {
    const name = role === "tool" ? (str(obj(msg.author).name) ?? "tool") : recipient!;
    return {
      ...base,
      role: "tool",
      toolName: name.slice(0, 64),
      content: role === "tool" ? content : `Call: ${content}`,
      keep: true,
    };
  }
  return {
    ...base,
    role,
    content: role === "assistant" ? content + citations(meta) : content,
    interrupted: role === "assistant" && (finish === "interrupted" || str(msg.status) === "in_progress"),
    model: str(meta.model_slug) ?? undefined,
    keep: true,
  };
}

export function parseChatGpt(c: Obj): ImportedConversation {
  const mapping = obj(c.mapping);
  const ref = str(c.conversation_id) ?? str(c.id);
  if (!ref) throw new SkipConversation("it has no conversation id");
  const nodes = Object.entries(mapping).map(([id, node]) => toMessage(str(obj(node).id) ?? id, obj(node)));
  const { messages, activeRef, dropped } = pruneTree(nodes, str(c.current_node));
  return {
    format: "chatgpt",
    ref: `chatgpt:${ref}`,
    title: text(c.title) || null,
    createdAt: toDate(c.create_time),
    updatedAt: toDate(c.update_time),
    messages,
    activeRef,
    archived: c.is_archived === true,
    dropped,
  };
}
