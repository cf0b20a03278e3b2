// Claude's data export (conversations.json): an array of conversations
// {uuid, name, created_at, chat_messages: [{uuid, sender, text, content[],
// attachments[], files[], created_at, parent_message_uuid?}]}. What real exports
// hold (recorded by converters run on them): the first message's parent is a
// sentinel id that is no message; there is no pointer to the branch shown, so
// the newest message's branch is; `content` blocks are the message (the flat
// `text` can hold the thinking); an answer's artifacts and created files are
// `tool_use` blocks whose input is the work itself; an upload is listed under
// `files` and, when its text was extracted, again under `attachments`.
// Attachments with extracted text keep it; binary files are noted. Its
// projects.json gives project names, instructions and knowledge files (see parseClaudeProject).
import { splitIntoParts } from "@/lib/text/parts";
import {
  chain,
  pruneTree,
  SkipConversation,
  splitMessage,
  str,
  text,
  toDate,
  toolNote,
  work,
  type ImportedConversation,
  type ImportedProject,
  type ImportedMessage,
  type MessagePart,
} from "../conversation";

type Obj = Record<string, unknown>;
type Node = ImportedMessage & { keep: boolean };
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const json = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));

export const isClaude = (v: Obj) => Array.isArray(v.chat_messages);

/** The code fence's language for artifact types that name none of their own. */
const ARTIFACT_LANGUAGES = new Map([
  ["text/html", "html"],
  ["image/svg+xml", "svg"],
  ["application/vnd.ant.mermaid", "mermaid"],
  ["application/vnd.ant.react", "jsx"],
]);

/** A part under construction: a tool call still waiting for its result (matched by the call's id when given). */
type Part = MessagePart & { pending?: true; work?: true; callId?: string | null };

/** A `tool_use` block: the work itself for artifacts and created files, else a tool call waiting for its result. */
function toolUse(b: Obj): Part {
  const name = str(b.name) ?? "tool";
  const input = obj(b.input);
  const content = typeof input.content === "string" ? input.content : null;
  if (name === "artifacts" && content !== null && input.command !== "update") {
    const type = str(input.type) ?? "";
    const markdown = type === "text/markdown" || (!type && !input.language);
    const shown = work(
      text(input.title),
      content,
      str(input.language) ?? ARTIFACT_LANGUAGES.get(type) ?? null,
      markdown,
    );
    return { role: "assistant", content: shown, work: true, callId: str(b.id) };
  }
  if (typeof input.file_text === "string") {
    const path = text(input.path);
    const shown = work(path, input.file_text, path.split(".").pop() ?? null, false);
    return { role: "assistant", content: shown, work: true, callId: str(b.id) };
  }
  return { role: "tool", toolName: name.slice(0, 64), content: json(b.input), pending: true, callId: str(b.id) };
}

/** A `tool_result` block's text: its items' text, with the title and address of what a search found. */
function toolResult(b: Obj): string {
  if (typeof b.content === "string") return b.content;
  return list(b.content)
    .map(obj)
    .map((x) => [[text(x.title), text(x.url)].filter(Boolean).join(" — "), text(x.text)].filter(Boolean).join("\n"))
    .filter(Boolean)
    .join("\n");
}

/** An answer's parts in order: its words, its works, tool calls with their results as tool notes; thinking left out. */
function answerParts(m: Obj): MessagePart[] {
  const blocks = list(m.content).map(obj);
  if (!blocks.length) return [{ role: "assistant", content: text(m.text) }];
  const out: Part[] = [];
  for (const b of blocks) {
    if (b.type === "text") out.push({ role: "assistant", content: text(b.text) });
    else if (b.type === "tool_use") out.push(toolUse(b));
    else if (b.type === "tool_result") {
      // The result belongs to the call with its id (without one: the call before it). A work's result ("OK") adds
      // nothing to the work.
      const id = str(b.tool_use_id);
      const call = id ? out.findLast((p) => p.callId === id) : out.findLast((p) => p.pending || p.work);
      const result = toolResult(b);
      if (call?.work) continue;
      if (call?.pending) {
        call.content = toolNote(call.content, result);
        delete call.pending;
      } else out.push({ role: "tool", toolName: (str(b.name) ?? "tool").slice(0, 64), content: toolNote("", result) });
    }
    // thinking, redacted thinking and whatever else is internal: not part of the conversation's words
  }
  // Words and works next to each other read as one answer, as the app showed them.
  const merged: MessagePart[] = [];
  for (const { pending, work: _w, callId: _c, ...p } of out) {
    const last = merged.at(-1);
    if (p.role === "assistant" && last?.role === "assistant") last.content = [last.content, p.content].join("\n\n");
    else merged.push(pending ? { ...p, content: toolNote(p.content, null) } : p);
  }
  return merged;
}

/** A user's message: its words and notes of the files the export has no text for; the files with text, apart. */
function userBody(m: Obj): { content: string; attachments: Array<{ name: string; text: string }> } {
  const blocks = list(m.content).map(obj);
  const words = blocks.length
    ? blocks
        .filter((b) => b.type === "text")
        .map((b) => text(b.text))
        .join("\n\n")
    : text(m.text);
  const carried = new Set<string>();
  const attachments: Array<{ name: string; text: string }> = [];
  const notes = list(m.attachments)
    .map(obj)
    .flatMap((a) => {
      const type = text(a.file_type);
      const name = text(a.file_name) || (type ? `attachment.${type.replace(/[^\w]/g, "")}` : "attachment.txt");
      const extracted = text(a.extracted_content);
      carried.add(name);
      if (extracted) attachments.push({ name, text: extracted });
      return extracted ? [] : [`[Attached file ${name} not imported: no text in the export]`];
    });
  // The same upload is listed under `files` too: only what `attachments` did not name is noted again.
  const files = [
    ...new Set(
      list(m.files)
        .map(obj)
        .map((f) => text(f.file_name))
        .filter((name) => !carried.has(name)),
    ),
  ].map((name) => `[File ${name || "(unnamed)"} not imported: binary files are not in the export]`);
  return { content: [words, ...notes, ...files].filter(Boolean).join("\n\n"), attachments };
}

function expand(node: Node, m: Obj): Node[] {
  if (node.role === "user") {
    const { content, attachments } = userBody(m);
    return [{ ...node, content, attachments, keep: !!content.trim() || attachments.length > 0 }];
  }
  return splitMessage(node, answerParts(m));
}

export function parseClaude(c: Obj): ImportedConversation {
  const ref = str(c.uuid);
  if (!ref) throw new SkipConversation("it has no conversation id");
  const raw = list(c.chat_messages).map(obj);
  const node = (m: Obj, i: number): Node => ({
    ref: str(m.uuid) ?? `${ref}:${i}`,
    parentRef: str(m.parent_message_uuid),
    role: m.sender === "human" ? "user" : "assistant",
    content: "",
    createdAt: toDate(m.created_at),
    keep: true,
  });
  // Newer exports link each message to its parent (edits branch); older ones are a plain list.
  const linked = raw.some((m) => typeof m.parent_message_uuid === "string");
  const nodes = linked ? raw.map(node) : chain(raw.map(node)).map((m) => ({ ...m, keep: true }) as Node);
  const { messages, activeRef, dropped } = pruneTree(
    nodes.flatMap((n, i) => expand(n, raw[i])),
    // No export names the branch shown; pruneTree then takes the newest message's (a plain list: its last).
    linked ? str(c.current_leaf_message_uuid) : (nodes.at(-1)?.ref ?? null),
  );
  return {
    format: "claude",
    ref: `claude:${ref}`,
    title: text(c.name) || null,
    createdAt: toDate(c.created_at),
    updatedAt: toDate(c.updated_at),
    messages,
    activeRef,
    dropped,
    project: claudeProject(c),
  };
}

/** A conversation in a Claude project: `project_uuid`, or `project: {uuid, name}`; the name when the file has it. */
function claudeProject(c: Obj): ImportedProject | undefined {
  const p = obj(c.project);
  const id = str(c.project_uuid) ?? str(p.uuid);
  if (!id) return undefined;
  const name = text(p.name) || text(c.project_name);
  return {
    ref: `claude:${id}`,
    name: name || claudePlaceholderName(id),
    instructions: text(p.prompt_template) || undefined,
  };
}

/** The name a Claude project gets when a conversation names it before its projects.json entry is read. */
export const claudePlaceholderName = (id: string) => `Claude project ${id.slice(0, 8)}`;

/**
 * One entry of Claude's projects.json (or of projects/<uuid>.json in newer exports): {uuid, name, description,
 * is_private, is_starter_project, prompt_template, docs[{filename, content}], creator}. The export's conversations
 * do not say which project they were in, so these give names, instructions and the project's knowledge files.
 */
export const isClaudeProject = (v: Obj) =>
  !!str(v.uuid) &&
  typeof v.name === "string" &&
  !("chat_messages" in v) &&
  ("prompt_template" in v || "is_starter_project" in v || Array.isArray(v.docs));

export function parseClaudeProject(v: Obj): ImportedProject & { starter: boolean; documents: ImportedConversation[] } {
  const id = str(v.uuid)!;
  const project = {
    ref: `claude:${id}`,
    name: text(v.name) || claudePlaceholderName(id),
    instructions: text(v.prompt_template) || undefined,
  };
  return { ...project, starter: v.is_starter_project === true, documents: claudeProjectDocuments(v, project) };
}

/** At most this many of one project's knowledge files. */
const MAX_PROJECT_DOCUMENTS = 500;

/**
 * A knowledge file longer than this goes in as several messages of at most this many characters, each ending at a
 * paragraph where it can: the whole file is kept (a message alone is cut at 100,000 on import), and recall finds
 * the part that answers, not one long message.
 */
const KNOWLEDGE_PART_CHARS = 20_000;

/**
 * A project's knowledge files (`docs[{uuid, filename, content, created_at}]`, the text Claude extracted), each as a
 * thread in the project (one message, or one per part of a long file): searchable, and recalled in the project's
 * chats, as Claude read them there.
 */
function claudeProjectDocuments(v: Obj, project: ImportedProject): ImportedConversation[] {
  const docs = Array.isArray(v.docs) ? v.docs.slice(0, MAX_PROJECT_DOCUMENTS) : [];
  return docs.flatMap((d, i): ImportedConversation[] => {
    const doc = obj(d);
    const content = text(doc.content);
    if (!content.trim()) return [];
    const name = text(doc.filename) || `document ${i + 1}`;
    const ref = `claude-doc:${str(v.uuid)}:${str(doc.uuid) ?? name}`;
    const at = toDate(doc.created_at);
    const parts = splitIntoParts(content, KNOWLEDGE_PART_CHARS);
    const refOf = (k: number) => (k ? `${ref}#${k + 1}` : ref);
    const messages = parts.map((part, k) => ({
      ref: refOf(k),
      parentRef: k ? refOf(k - 1) : null,
      role: "user" as const,
      content: `[Project knowledge file: ${name}${parts.length > 1 ? `, part ${k + 1} of ${parts.length}` : ""}]\n\n${part}`,
      createdAt: at,
    }));
    return [
      {
        format: "claude",
        ref,
        title: `${name} (project knowledge)`,
        createdAt: at,
        updatedAt: at,
        messages,
        activeRef: refOf(parts.length - 1),
        project,
      },
    ];
  });
}

/**
 * Claude's memory (memories.json in the export, or memories/<account>.json): what Claude kept about the user, a
 * summary in markdown for all chats (`conversations_memory`) and one per project (`project_memories`, by the
 * project's uuid).
 */
export type ClaudeMemory = { general: string | null; projects: Array<{ ref: string; text: string }> };

export const isClaudeMemory = (v: Obj) =>
  !("chat_messages" in v) &&
  (typeof v.conversations_memory === "string" ||
    (!!v.project_memories && typeof v.project_memories === "object" && !Array.isArray(v.project_memories)));

/** At most this many projects' memories from one entry. */
const MAX_PROJECT_MEMORIES = 1_000;

export function parseClaudeMemory(v: Obj): ClaudeMemory {
  return {
    general: text(v.conversations_memory).trim() || null,
    projects: Object.entries(obj(v.project_memories))
      .slice(0, MAX_PROJECT_MEMORIES)
      .map(([id, t]) => ({ ref: `claude:${id}`, text: text(t).trim() }))
      .filter((p) => p.text),
  };
}
