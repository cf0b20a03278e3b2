// ChatGPT's data export (conversations.json): an array of conversations, each a
// `mapping` of nodes {id, message, parent, children} with `current_node` the
// message shown last. Edits and regenerations are sibling branches.
import {
  EMPTY_CONVERSATION,
  pruneTree,
  SkipConversation,
  str,
  text,
  toDate,
  work,
  type CustomInstructions,
  type FileRef,
  type ImportedConversation,
  type ImportedProject,
  type ImportedMessage,
  type ImportedSideFeedback,
} from "../conversation";
import { feedbackComment, ratingOf, tagWords } from "../feedback";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});

// An entry without its mapping (ChatGPT writes some: deleted or never-started chats) is still ChatGPT's.
export const isChatGpt = (v: Obj) =>
  (typeof v.mapping === "object" && v.mapping !== null) ||
  (("conversation_id" in v || "current_node" in v) && "create_time" in v && !("chat_messages" in v));

const IMAGE_NOTE = "[image not imported]";
/** The export's id of a picture or recording (`file-service://file-…`, `sediment://file_…`), or null. */
const pointerId = (p: unknown): string | null => {
  const at = str(obj(p).asset_pointer)?.split("://")[1];
  return at && /^[A-Za-z0-9_-]{1,200}$/.test(at) ? at : null;
};

/** Text of one content part: strings as they are; images, audio and files as a short note. */
function partText(p: unknown): string {
  if (typeof p === "string") return text(p);
  const o = obj(p);
  if (typeof o.text === "string") return text(o.text); // audio transcriptions, text parts
  const type = str(o.content_type) ?? "attachment";
  if (type.includes("image")) return IMAGE_NOTE;
  if (type.includes("audio")) return "[audio not imported]";
  return `[${type.replace(/_/g, " ")} not imported]`;
}

/** A message's content as text (code fenced, browsing results and quotes as plain text), or null to skip it. */
function contentText(content: Obj): string | null {
  const type = str(content.content_type) ?? "text";
  const parts = Array.isArray(content.parts) ? content.parts : [];
  switch (type) {
    case "text":
    case "multimodal_text": {
      // A voice message is its transcription and the recording: the words stand for it, no "[audio …]" beside them.
      const spoken = parts.some((p) => obj(p).content_type === "audio_transcription");
      const kept = spoken ? parts.filter((p) => !String(obj(p).content_type ?? "").includes("audio_asset")) : parts;
      return kept.map(partText).filter(Boolean).join("\n\n");
    }
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

type Source = { title: string; url: string };

/** Web-search citation markers in an answer: 【3:0†source】 (older exports) and \ue200cite\ue202turn0search1\ue201. */
const MARKER = /【[^【】\n]{0,200}】|\ue200[^\ue201\n]{0,200}\ue201/g;

function source(m: Obj): Source | null {
  const title = text(m.title) || text(m.attribution);
  const url = text(m.url);
  return title || url ? { title, url } : null;
}

/**
 * The answer with each citation marker turned into a numbered reference ([1], [2]…) that matches the numbered
 * "Sources:" list under it. Older exports place `metadata.citations` by position (start_ix, in code points);
 * newer ones list `metadata.content_references` by the marker's text. A marker with no known source is removed.
 */
export function withReferences(body: string, meta: Obj): string {
  const byPosition = new Map<number, Source[]>();
  const byMarker = new Map<string, Source[]>();
  const all: Source[] = [];
  for (const c of (Array.isArray(meta.citations) ? meta.citations : []).map(obj)) {
    const s = source(obj(c.metadata));
    if (!s || typeof c.start_ix !== "number") continue;
    all.push(s);
    byPosition.set(c.start_ix, [...(byPosition.get(c.start_ix) ?? []), s]);
  }
  for (const r of (Array.isArray(meta.content_references) ? meta.content_references : []).map(obj)) {
    const listed = [r.items, r.sources].find((l) => Array.isArray(l) && l.length) as unknown[] | undefined;
    const list = (listed ?? [r])
      .map(obj)
      .map(source)
      .filter((x): x is Source => !!x);
    all.push(...list);
    const marker = typeof r.matched_text === "string" ? r.matched_text : "";
    if (marker.trim() && list.length) byMarker.set(marker, [...(byMarker.get(marker) ?? []), ...list]);
  }
  const numbers = new Map<string, number>();
  const ordered: Source[] = [];
  const number = (s: Source) => {
    const key = s.url || s.title;
    if (!numbers.has(key)) {
      numbers.set(key, ordered.length + 1);
      ordered.push(s);
    }
    return numbers.get(key)!;
  };
  let codePoints = 0;
  let last = 0;
  const replaced = body.replace(MARKER, (marker, at: number) => {
    for (const _ of body.slice(last, at)) codePoints++;
    last = at;
    const found = byPosition.get(codePoints) ?? byMarker.get(marker) ?? [];
    const refs = [...new Set(found.map(number))];
    return refs.map((n) => `[${n}]`).join("");
  });
  for (const s of all) number(s); // sources the text never marked are listed after the marked ones
  if (!ordered.length) return replaced;
  const lines = ordered.map((s, i) => `${i + 1}. ${[s.title, s.url].filter(Boolean).join(" — ")}`);
  return `${replaced.replace(/[ \t]+\n/g, "\n").trimEnd()}\n\nSources:\n${lines.join("\n")}`;
}

/**
 * A deep research report: newer exports keep it in the research app's widget state (a JSON string in
 * `metadata.chatgpt_sdk.widget_state`, `report_message` once `status` is "completed"), on the app's tool messages,
 * not in any message's content. Null for other messages; "" for the research app's bookkeeping (plans, sessions).
 */
function researchReport(meta: Obj): { id: string; text: string } | "" | null {
  const sdk = obj(meta.chatgpt_sdk);
  if (sdk.attribution_id !== "connector_openai_deep_research") return null; // other apps' calls stay tool notes
  if (typeof sdk.widget_state !== "string") return "";
  let state: Obj;
  try {
    state = obj(JSON.parse(sdk.widget_state));
  } catch {
    return "";
  }
  const report = obj(state.report_message);
  const body = Array.isArray(obj(report.content).parts) ? (obj(report.content).parts as unknown[])[0] : null;
  if (state.status !== "completed" || typeof body !== "string" || !body.trim()) return "";
  return { id: str(report.id) ?? body.slice(0, 200), text: withReferences(text(body), obj(report.metadata)) };
}

const isImage = (a: Obj) => String(a.mime_type ?? a.mimeType ?? "").startsWith("image/");
const fileNote = (a: Obj) => `[File ${text(a.name) || "(unnamed)"} not imported: the export has no file contents]`;

/** Files a message came with, noted (images are noted where they appear). */
function attachedFiles(meta: Obj): string[] {
  return (Array.isArray(meta.attachments) ? meta.attachments : [])
    .map(obj)
    .filter((a) => !isImage(a))
    .map(fileNote);
}

/**
 * The files a user's message names, by the export's id: its pictures (image parts) and its uploads
 * (`metadata.attachments`), each once, with the note its content holds for it. A zip export carries their bytes.
 */
function fileRefs(content: Obj, meta: Obj): FileRef[] {
  const attached = (Array.isArray(meta.attachments) ? meta.attachments : []).map(obj);
  const named = new Map(attached.flatMap((a) => (str(a.id) ? [[str(a.id)!, a] as const] : [])));
  const refs = new Map<string, FileRef>();
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    const id = pointerId(part);
    if (id && String(obj(part).content_type ?? "").includes("image"))
      refs.set(id, { ref: id, name: text(named.get(id)?.name) || null, note: IMAGE_NOTE });
  }
  for (const a of attached) {
    const id = str(a.id);
    if (id && !refs.has(id) && !isImage(a) && /^[A-Za-z0-9_-]{1,200}$/.test(id))
      refs.set(id, { ref: id, name: text(a.name) || null, note: fileNote(a) });
  }
  return [...refs.values()];
}

function toMessage(id: string, node: Obj, mapping: Obj, reports: Set<string>): ImportedMessage & { keep: boolean } {
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
  // Newer models write on channels: "final" and "commentary" are shown, "analysis" is the reasoning (never imported).
  if (msg.channel === "analysis") return base;
  if (role !== "user" && role !== "assistant" && role !== "tool") return base; // system prompts are hidden in ChatGPT too
  const report = researchReport(meta);
  if (report === "") return base; // the research app's plans and sessions: not part of the conversation
  if (report) {
    // The same report can ride on more than one of the app's messages: it is imported once.
    if (reports.has(report.id)) return base;
    reports.add(report.id);
    return { ...base, role: "assistant", content: report.text, model: str(meta.model_slug) ?? undefined, keep: true };
  }
  const said = contentText(obj(msg.content));
  // A reply to a passage the user selected ("Ask ChatGPT") quotes it; the files they attached are noted.
  const quote = role === "user" ? text(meta.targeted_reply).trim() : "";
  const content = [quote && quote.replace(/^/gm, "> "), said, ...(role === "user" ? attachedFiles(meta) : [])]
    .filter(Boolean)
    .join("\n\n");
  if (said === null || !content.trim()) return base;
  const recipient = str(msg.recipient);
  const finish = str(obj(meta.finish_details).type);
  // Canvas: the document the assistant wrote is its answer; the tool's "Successfully created…" is bookkeeping.
  if (role === "tool" && str(obj(msg.author).name)?.startsWith("canmore.")) return base;
  const canvas = role === "assistant" && recipient?.startsWith("canmore.") ? canvasText(msg, node, mapping) : null;
  if (canvas)
    return { ...base, role: "assistant", content: canvas, model: str(meta.model_slug) ?? undefined, keep: true };
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
  const files = role === "user" ? fileRefs(obj(msg.content), meta) : [];
  return {
    ...base,
    role,
    content: role === "assistant" ? withReferences(content, meta) : content,
    ...(files.length ? { fileRefs: files } : {}),
    interrupted: role === "assistant" && (finish === "interrupted" || str(msg.status) === "in_progress"),
    model: str(meta.model_slug) ?? undefined,
    keep: true,
  };
}

/**
 * A canvas document as the user saw it: `canmore.create_textdoc` {name, type: "document" | "code/<language>",
 * content}, or an `update_textdoc` that rewrites it whole (pattern ".*"). Partial edits stay tool notes (null).
 */
function canvasText(msg: Obj, node: Obj, mapping: Obj): string | null {
  let call: Obj;
  try {
    call = obj(JSON.parse(String(obj(msg.content).text ?? "")));
  } catch {
    return null;
  }
  // The tool's reply names the document's title and type (an update's call says neither).
  const replies = (Array.isArray(node.children) ? node.children : []).slice(0, 8);
  const canvasMeta =
    replies
      .map((c) => obj(obj(obj(obj(mapping[String(c)]).message).metadata).canvas))
      .concat(obj(obj(msg.metadata).canvas))
      .find((c) => Object.keys(c).length) ?? {};
  const rewrite = Array.isArray(call.updates) && call.updates.length === 1 ? obj(call.updates[0]) : null;
  const content =
    typeof call.content === "string"
      ? call.content
      : rewrite && /^\^?\.\*\$?$/.test(String(rewrite.pattern)) && typeof rewrite.replacement === "string"
        ? rewrite.replacement
        : null;
  if (content === null) return null;
  const title = text(call.name) || text(canvasMeta.title) || (rewrite ? "Canvas (updated)" : "Canvas");
  const type = str(call.type) ?? str(canvasMeta.textdoc_type) ?? "document";
  return work(title, text(content), type.startsWith("code/") ? type.slice(5) : null, !type.startsWith("code/"));
}

/** ChatGPT wraps the user's own words in a preamble and a fence: the words alone. */
function ownWords(v: unknown): string | null {
  const s = text(v).trim();
  if (!s) return null;
  const fenced = [...s.matchAll(/```([\s\S]*?)```/g)].map((m) => m[1].trim()).filter(Boolean);
  if (fenced.length) return fenced.join("\n");
  return s.replace(/^The user provided [^\n]*:\s*/i, "").trim() || null;
}

/** The custom instructions ChatGPT put at the top of the conversation (a hidden user_editable_context node). */
function customInstructions(mapping: Obj): CustomInstructions | undefined {
  for (const node of Object.values(mapping)) {
    const content = obj(obj(obj(node).message).content);
    if (content.content_type !== "user_editable_context") continue;
    const about = ownWords(content.user_profile);
    const howToRespond = ownWords(content.user_instructions);
    if (about || howToRespond) return { about, howToRespond };
  }
  return undefined;
}

export function parseChatGpt(c: Obj): ImportedConversation {
  const ref = str(c.conversation_id) ?? str(c.id);
  if (!ref) throw new SkipConversation("it has no conversation id");
  if (typeof c.mapping !== "object" || c.mapping === null) throw new SkipConversation(EMPTY_CONVERSATION);
  const mapping = obj(c.mapping);
  const reports = new Set<string>();
  const nodes = Object.entries(mapping).map(([id, node]) =>
    toMessage(str(obj(node).id) ?? id, obj(node), mapping, reports),
  );
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
    customInstructions: customInstructions(mapping),
    project: chatGptProject(c),
  };
}

/**
 * A conversation in a ChatGPT project names it by the project's gizmo id ("g-p-…", gizmo_type "snorlax"); the
 * export has no project names, so the Mnemo project is named after its first conversation until the user renames
 * it (lib/import/project-names.ts; the next import finds it by the id whatever its name).
 */
function chatGptProject(c: Obj): ImportedProject | undefined {
  const id = str(c.gizmo_id) ?? str(c.conversation_template_id);
  if (!id || !(id.startsWith("g-p-") || c.gizmo_type === "snorlax")) return undefined;
  const named = text(c.project_name) || text(obj(c.project).name);
  if (named) return { ref: `chatgpt:${id}`, name: named };
  return { ref: `chatgpt:${id}`, name: text(c.title) || chatGptPlaceholderName(id), nameless: true };
}

/** What an earlier import named a ChatGPT project it knew only by id. */
export const chatGptPlaceholderName = (id: string) => `ChatGPT project ${id.slice(4, 12)}`;

/**
 * One entry of message_feedback.json, the 👍/👎 the user gave answers, beside conversations.json. Older exports
 * name the answer `message_id` and write the conversation's id without hyphens; newer ones name it `id` and spell
 * the rating "thumbs_up". `content` is a JSON string: the words written and the reasons ticked.
 */
export const isChatGptFeedback = (v: Obj) =>
  typeof v.conversation_id === "string" &&
  typeof v.rating === "string" &&
  (typeof v.message_id === "string" || typeof v.id === "string") &&
  !("mapping" in v) &&
  !("create_time" in v && "title" in v);

export function parseChatGptFeedback(v: Obj): ImportedSideFeedback | null {
  const conversation = str(v.conversation_id);
  const messageRef = str(v.message_id) ?? str(v.id);
  const rating = ratingOf(v.rating);
  if (!conversation || !messageRef || rating === null) return null;
  let said: Obj = {};
  try {
    said = typeof v.content === "string" ? obj(JSON.parse(v.content)) : obj(v.content);
  } catch {
    // Not JSON: no comment, the rating still counts.
  }
  const tags = (Array.isArray(said.tags) ? said.tags : []).filter((t): t is string => typeof t === "string");
  const hyphenated = /^[0-9a-f]{32}$/i.test(conversation)
    ? conversation.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, "$1-$2-$3-$4-$5")
    : null;
  return {
    conversationRefs: [conversation, hyphenated].filter((c): c is string => !!c).map((c) => `chatgpt:${c}`),
    messageRef,
    kind: "rating",
    rating,
    comment: feedbackComment(tags.slice(0, 20).map(tagWords), said.text),
    at: toDate(v.update_time) ?? toDate(v.create_time),
  };
}
