// Claude's data export (conversations.json): an array of conversations
// {uuid, name, created_at, chat_messages: [{uuid, sender, text, content[],
// attachments[], files[], created_at, parent_message_uuid?}]}. Attachments
// with extracted text keep it; binary files (images, PDFs without text) are
// left out with a note saying so. Its projects.json gives project names and
// instructions (see parseClaudeProject).
import {
  chain,
  pruneTree,
  SkipConversation,
  str,
  text,
  toDate,
  type ImportedConversation,
  type ImportedProject,
  type ImportedMessage,
} from "../conversation";

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export const isClaude = (v: Obj) => Array.isArray(v.chat_messages);

function body(m: Obj): string {
  const blocks = list(m.content).map(obj);
  const fromBlocks = blocks
    .map((b) => {
      if (b.type === "text") return text(b.text);
      if (b.type === "tool_use") return `[used ${str(b.name) ?? "a tool"}]`;
      if (b.type === "tool_result")
        return list(b.content)
          .map((x) => text(obj(x).text))
          .filter(Boolean)
          .join("\n");
      return ""; // thinking and other internal blocks
    })
    .filter(Boolean)
    .join("\n\n");
  const main = fromBlocks || text(m.text);
  const attached = list(m.attachments)
    .map(obj)
    .map((a) => {
      const name = text(a.file_name) || "attachment";
      const extracted = text(a.extracted_content);
      return extracted
        ? `[Attached file: ${name}]\n${extracted}`
        : `[Attached file ${name} not imported: no text in the export]`;
    });
  const files = list(m.files)
    .map(obj)
    .map((f) => `[File ${text(f.file_name) || "(unnamed)"} not imported: binary files are not in the export]`);
  return [main, ...attached, ...files].filter(Boolean).join("\n\n");
}

export function parseClaude(c: Obj): ImportedConversation {
  const ref = str(c.uuid);
  if (!ref) throw new SkipConversation("it has no conversation id");
  const raw = list(c.chat_messages).map(obj);
  const toMsg = (m: Obj, i: number): Omit<ImportedMessage, "parentRef"> => ({
    ref: str(m.uuid) ?? `${ref}:${i}`,
    role: m.sender === "human" ? "user" : "assistant",
    content: body(m),
    createdAt: toDate(m.created_at),
  });
  // Newer exports link each message to its parent (edits branch); older ones are a plain list.
  const linked = raw.length > 0 && raw.some((m) => typeof m.parent_message_uuid === "string");
  const messages = linked
    ? pruneTree(
        raw.map((m, i) => ({ ...toMsg(m, i), parentRef: str(m.parent_message_uuid), keep: true })),
        str(c.current_leaf_message_uuid),
      )
    : { messages: chain(raw.map(toMsg)), activeRef: null as string | null, dropped: {} };
  if (!linked) messages.activeRef = messages.messages.at(-1)?.ref ?? null;
  const kept = messages.messages.filter((m) => m.content.trim());
  if (kept.length !== messages.messages.length) {
    // Empty messages: drop them but keep the chain linked.
    const pruned = pruneTree(
      messages.messages.map((m) => ({ ...m, keep: !!m.content.trim() })),
      messages.activeRef,
    );
    messages.messages = pruned.messages;
    messages.activeRef = pruned.activeRef;
  }
  return {
    format: "claude",
    ref: `claude:${ref}`,
    title: text(c.name) || null,
    createdAt: toDate(c.created_at),
    updatedAt: toDate(c.updated_at),
    messages: messages.messages,
    activeRef: messages.activeRef,
    dropped: messages.dropped,
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
 * do not say which project they were in, so these give names and instructions, not threads.
 */
export const isClaudeProject = (v: Obj) =>
  !!str(v.uuid) &&
  typeof v.name === "string" &&
  !("chat_messages" in v) &&
  ("prompt_template" in v || "is_starter_project" in v || Array.isArray(v.docs));

export function parseClaudeProject(v: Obj): ImportedProject & { starter: boolean } {
  const id = str(v.uuid)!;
  return {
    ref: `claude:${id}`,
    name: text(v.name) || claudePlaceholderName(id),
    instructions: text(v.prompt_template) || undefined,
    starter: v.is_starter_project === true,
  };
}
