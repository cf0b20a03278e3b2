// Open WebUI's chat export (Settings → Chats → Export): an array of
// {id, title, chat: {history: {messages: {id: {parentId, role, content,
// timestamp, model}}, currentId}, messages[]}, created_at, updated_at}.
import { chain, pruneTree, SkipConversation, str, text, toDate, type ImportedConversation } from "../conversation";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});

export const isOpenWebUi = (v: Obj) =>
  typeof v.chat === "object" && v.chat !== null && ("history" in obj(v.chat) || "messages" in obj(v.chat));

function content(m: Obj): string {
  if (typeof m.content === "string") return text(m.content);
  if (Array.isArray(m.content))
    return m.content
      .map((p) => text(obj(p).text))
      .filter(Boolean)
      .join("\n\n");
  return "";
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
      Object.entries(tree).map(([id, raw]) => {
        const m = obj(raw);
        const r = role(m.role);
        const body = content(m);
        return {
          ref: str(m.id) ?? id,
          parentRef: str(m.parentId),
          role: r ?? "user",
          content: body,
          createdAt: toDate(m.timestamp),
          model: str(m.model) ?? undefined,
          interrupted: r === "assistant" && m.done === false,
          keep: !!r && !!body.trim(),
        };
      }),
      str(history.currentId),
    ));
  } else {
    const list = (Array.isArray(chat.messages) ? chat.messages : [])
      .map(obj)
      .filter((m) => role(m.role) && content(m).trim());
    messages = chain(
      list.map((m, i) => ({
        ref: str(m.id) ?? `${ref}:${i}`,
        role: role(m.role)!,
        content: content(m),
        createdAt: toDate(m.timestamp),
      })),
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
