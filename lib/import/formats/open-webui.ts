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
  type ImportedFeedback,
  type ImportedMessage,
} from "../conversation";
import { feedbackComment, ratingOf } from "../feedback";
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

/**
 * The sources an answer cited as [1], [2]…, numbered as Open WebUI numbers them for the model (its middleware: each
 * retrieved document's `metadata.source`, else its source's id, in order, each once), as a "Sources:" list.
 */
function sourcesList(m: Obj): string {
  const numbered = new Map<string, string>();
  for (const s of (Array.isArray(m.sources) ? m.sources : Array.isArray(m.citations) ? m.citations : []).map(obj)) {
    const source = obj(s.source);
    const metas = Array.isArray(s.metadata) && s.metadata.length ? s.metadata.map(obj) : [{}];
    for (const meta of metas.slice(0, 100)) {
      const id = str(meta.source) ?? str(source.id) ?? "N/A";
      if (numbered.has(id) || numbered.size >= 100) continue;
      const url = /^https?:\/\//.test(id) ? id : (str(source.url) ?? "");
      const title = text(meta.title) || text(meta.name) || text(source.name) || (url ? "" : id);
      numbered.set(id, [title, url].filter(Boolean).join(" — "));
    }
  }
  const lines = [...numbered.values()].map((l, i) => `${i + 1}. ${l}`);
  return lines.length ? `Sources:\n${lines.join("\n")}` : "";
}

/** The files a user's message came with: named, since the export has their names, not their contents. */
function filesNoted(m: Obj): string[] {
  return (Array.isArray(m.files) ? m.files : [])
    .map(obj)
    .slice(0, 100)
    .map((f) => {
      const name = text(f.name) || text(obj(f.file).filename) || text(obj(obj(f.file).meta).name);
      return f.type === "image" && !name
        ? "[image not imported]"
        : `[File ${name || "(unnamed)"} not imported: the export has no file contents]`;
    });
}

/** A user's message as it is; an answer as its parts (reasoning left out, tool calls as tool notes). */
function expand(node: Node, m: Obj): Node[] {
  const raw = content(m);
  if (node.role !== "assistant") {
    const said = [text(raw), ...filesNoted(m)].filter((x) => x.trim()).join("\n\n");
    return [{ ...node, content: said, keep: node.keep && !!said.trim() }];
  }
  const fromOutput = Array.isArray(m.output) ? openWebUiOutputParts(m.output) : [];
  const parts = fromOutput.some((p) => p.content.trim()) ? fromOutput : openWebUiParts(raw);
  const sources = sourcesList(m);
  const last = parts.findLastIndex((p) => p.role === "assistant" && p.content.trim());
  if (sources && last >= 0) parts[last] = { ...parts[last], content: `${parts[last].content.trimEnd()}\n\n${sources}` };
  return splitMessage(node, parts);
}

/** A message's `annotation`, Open WebUI's 👍/👎: {rating: 1 | -1, reason (one of its phrases), comment}. */
function rated(messageRef: string, m: Obj): ImportedFeedback[] {
  const a = obj(m.annotation);
  const rating = ratingOf(a.rating);
  if (rating === null) return [];
  const comment = feedbackComment(typeof a.reason === "string" ? [a.reason] : [], a.comment);
  return [{ messageRef, kind: "rating", rating, comment, at: null }];
}

const role = (r: unknown) => (r === "user" ? "user" : r === "assistant" ? "assistant" : null);

export function parseOpenWebUi(c: Obj): ImportedConversation {
  const chat = obj(c.chat);
  const ref = str(c.id) ?? str(chat.id);
  if (!ref) throw new SkipConversation("it has no chat id");
  const history = obj(chat.history);
  const tree = obj(history.messages);
  let messages, activeRef, dropped;
  const feedback: ImportedFeedback[] = [];
  if (Object.keys(tree).length) {
    ({ messages, activeRef, dropped } = pruneTree(
      Object.entries(tree).flatMap(([id, raw]) => {
        const m = obj(raw);
        const r = role(m.role);
        feedback.push(...rated(str(m.id) ?? id, m));
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
        .flatMap((m, i) => {
          feedback.push(...rated(str(m.id) ?? `${ref}:${i}`, m));
          return expand(
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
          );
        })
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
    feedback,
  };
}
