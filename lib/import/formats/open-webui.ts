// Open WebUI's chat export (Settings → Chats → Export): an array of
// {id, title, chat: {history: {messages: {id: {parentId, role, content,
// timestamp, model}}, currentId}, messages[]}, created_at, updated_at}.
import {
  chain,
  pruneTree,
  SkipConversation,
  splitMessage,
  str,
  text,
  toDate,
  type ImportedConversation,
  type ImportedMessage,
} from "../conversation";
import { openWebUiOutputParts, openWebUiParts } from "./open-webui-content";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});

export const isOpenWebUi = (v: Obj) =>
  typeof v.chat === "object" && v.chat !== null && ("history" in obj(v.chat) || "messages" in obj(v.chat));

/** The message's stored text (raw: for answers it still holds Open WebUI's <details> blocks). */
function content(m: Obj): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content))
    return m.content
      .map((p) => (typeof obj(p).text === "string" ? (obj(p).text as string) : ""))
      .filter(Boolean)
      .join("\n\n");
  return "";
}

type Node = ImportedMessage & { keep: boolean };

/** A user's message as it is; an answer as its parts (reasoning left out, tool calls as tool notes). */
function expand(node: Node, m: Obj): Node[] {
  const raw = content(m);
  if (node.role !== "assistant") return [{ ...node, content: text(raw), keep: node.keep && !!text(raw).trim() }];
  const fromOutput = Array.isArray(m.output) ? openWebUiOutputParts(m.output) : [];
  return splitMessage(node, fromOutput.some((p) => p.content.trim()) ? fromOutput : openWebUiParts(raw));
}

const role = (r: unknown) => (r === "user" ? "user" : r === "assistant" ? "assistant" : null);

export function parseOpenWebUi(c: Obj): ImportedConversation {
  const chat = obj(c.chat);
  const ref = str(c.id) ?? str(chat.id);
  if (!ref) throw new SkipConversation("it has no chat id");
  const history = obj(chat.history);
  const tree = obj(history.messages);
  let messages, activeRef, dropped;
  if (Object.keys(tree).length) {
    ({ messages, activeRef, dropped } = pruneTree(
      Object.entries(tree).flatMap(([id, raw]) => {
        const m = obj(raw);
        const r = role(m.role);
        const node: Node = {
          ref: str(m.id) ?? id,
          parentRef: str(m.parentId),
          role: r ?? "user",
          content: "",
          createdAt: toDate(m.timestamp),
          model: str(m.model) ?? undefined,
          interrupted: r === "assistant" && m.done === false,
          keep: !!r,
        };
        return expand(node, m);
      }),
      str(history.currentId),
    ));
  } else {
    const list = (Array.isArray(chat.messages) ? chat.messages : []).map(obj).filter((m) => role(m.role));
    messages = chain(
      list
        .flatMap((m, i) =>
          expand(
            {
              ref: str(m.id) ?? `${ref}:${i}`,
              parentRef: null,
              role: role(m.role)!,
              content: "",
              createdAt: toDate(m.timestamp),
              model: str(m.model) ?? undefined,
              keep: true,
            },
            m,
          ),
        )
        .filter((m) => m.keep)
        .map(({ keep: _k, parentRef: _p, ...m }) => m),
    );
    activeRef = messages.at(-1)?.ref ?? null;
  }
  return {
    format: "open-webui",
    ref: `open-webui:${ref}`,
    title: text(c.title) || text(chat.title) || null,
    createdAt: toDate(c.created_at) ?? toDate(chat.timestamp),
    updatedAt: toDate(c.updated_at),
    messages,
    activeRef,
    archived: c.archived === true,
    dropped,
  };
}
