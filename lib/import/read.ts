// Reads an export file as a stream, one conversation at a time, so a 200 MB
// conversations.json never sits in memory whole. The root decides the layout:
// - an array: ChatGPT, Claude, Open WebUI (or LibreChat) conversations, Claude's projects.json, or ChatGPT's
//   message_feedback.json;
// - Mnemo's own export: an object whose `threads` and `memories` are streamed;
// - any other object: one conversation (LibreChat's or Open WebUI's single export).
import { JSONParser } from "@streamparser/json";
import { AppError } from "@/lib/errors";
import {
  EMPTY_CONVERSATION,
  SkipConversation,
  str,
  text,
  type ImportFormat,
  type ImportedConversation,
  type ImportedFile,
  type ListedProject,
  type ImportedSideFeedback,
} from "./conversation";
import { isChatGpt, isChatGptFeedback, parseChatGpt, parseChatGptFeedback } from "./formats/chatgpt";
import {
  isClaude,
  isClaudeMemory,
  isClaudeProject,
  parseClaude,
  parseClaudeMemory,
  parseClaudeProject,
  type ClaudeMemory,
} from "./formats/claude";
import { isLibreChat, parseLibreChat } from "./formats/librechat";
import { parseMnemoFeedback, parseMnemoFile, parseMnemoProject, parseMnemoThread } from "./formats/mnemo";
import { isOpenWebUi, parseOpenWebUi } from "./formats/open-webui";
import { nextTick } from "./yield";
import { NEXT_FILE } from "./unzip";

type Obj = Record<string, unknown>;

export type ImportEntry =
  | { kind: "conversation"; conversation: ImportedConversation }
  | { kind: "project"; project: ListedProject | null }
  | {
      kind: "skipped";
      format: ImportFormat | null;
      title: string | null;
      reason: string;
      customInstructions?: ImportedConversation["customInstructions"];
    }
  | { kind: "memory"; memory: unknown }
  /** What another app remembered about the user (Claude's memories.json). */
  | { kind: "app-memory"; memory: ClaudeMemory }
  /** A rating kept apart from its conversation (ChatGPT's message_feedback.json, Mnemo's export); null: unreadable. */
  | { kind: "feedback"; feedback: ImportedSideFeedback | null }
  /** A file of Mnemo's export, with its bytes; null: not one sent with a message. */
  | { kind: "file"; file: ImportedFile | null };

/** The format of one conversation object, or null when no importer knows it. */
export function detectConversation(v: Obj): ImportFormat | null {
  if (isChatGpt(v)) return "chatgpt";
  if (isClaude(v)) return "claude";
  if (isOpenWebUi(v)) return "open-webui";
  if (isLibreChat(v)) return "librechat";
  return null;
}

const parsers: Record<Exclude<ImportFormat, "mnemo">, (v: Obj) => ImportedConversation> = {
  chatgpt: parseChatGpt,
  claude: parseClaude,
  "open-webui": parseOpenWebUi,
  librechat: parseLibreChat,
};

function toEntry(value: unknown, mnemo: boolean): ImportEntry {
  const v = value && typeof value === "object" && !Array.isArray(value) ? (value as Obj) : {};
  if (!mnemo && isClaudeProject(v)) return { kind: "project", project: parseClaudeProject(v) };
  if (!mnemo && isClaudeMemory(v)) return { kind: "app-memory", memory: parseClaudeMemory(v) };
  if (!mnemo && isChatGptFeedback(v)) return { kind: "feedback", feedback: parseChatGptFeedback(v) };
  const format = mnemo ? "mnemo" : detectConversation(v);
  const title = text(v.title) || text(v.name) || text((v.thread as Obj | undefined)?.title) || null;
  if (!format)
    return {
      kind: "skipped",
      format: null,
      title,
      reason: "not a conversation from ChatGPT, Claude, Open WebUI, LibreChat or Mnemo",
    };
  try {
    const conversation = format === "mnemo" ? parseMnemoThread(v) : parsers[format](v);
    if (!conversation.messages.length)
      return {
        kind: "skipped",
        format,
        title,
        reason: EMPTY_CONVERSATION,
        customInstructions: conversation.customInstructions,
      };
    return { kind: "conversation", conversation };
  } catch (e) {
    if (e instanceof SkipConversation) return { kind: "skipped", format, title, reason: e.message };
    return { kind: "skipped", format, title, reason: "it could not be read" };
  }
}

/** Parsed between two turns of the event loop, so a big file never holds the server for long. */
const PIECE = 256 * 1024;

/** The chunks cut into pieces of at most PIECE bytes or characters, decoded to text (NEXT_FILE passed on). */
async function* pieces(chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>) {
  let decoder = new TextDecoder();
  for await (const chunk of chunks) {
    if (chunk === NEXT_FILE) {
      const rest = decoder.decode();
      if (rest) yield rest;
      decoder = new TextDecoder();
      yield NEXT_FILE;
      continue;
    }
    for (let at = 0; at < chunk.length; at += PIECE) {
      const part = chunk.slice(at, at + PIECE);
      yield typeof part === "string" ? part : decoder.decode(part, { stream: true });
    }
  }
  const rest = decoder.decode();
  if (rest) yield rest;
}

const NOT_JSON =
  "That file is not a conversation export. For ChatGPT and Claude, choose the export zip (or conversations.json from it).";
const BROKEN =
  "The file stops being valid JSON part of the way through (was the download cut short?). The conversations before that point were imported.";

/** Yields the file's conversations (and, for Mnemo's export, memories) as they are parsed. */
export async function* readExport(
  chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<ImportEntry> {
  let parser: JSONParser | null = null;
  let mnemo = false;
  let head = "";
  const ready: ImportEntry[] = [];
  let started = false; // a first value was read

  const start = (sample: string): JSONParser => {
    const first = sample.trimStart()[0];
    if (first !== "[" && first !== "{") throw new AppError(NOT_JSON, 400);
    // Mnemo's export writes its format first; other objects are one conversation each.
    mnemo = first === "{" && /^\s*\{\s*"format"\s*:\s*"mnemo-export"/.test(sample);
    const paths =
      first === "["
        ? ["$.*"]
        : mnemo
          ? ["$.projects.*", "$.threads.*", "$.attachments.*", "$.memories.*", "$.feedback.*"]
          : ["$"];
    const p = new JSONParser({ paths, keepStack: false });
    p.onValue = ({ value, stack }) => {
      started = true;
      const under = str(stack[1]?.key);
      if (mnemo && under === "memories") ready.push({ kind: "memory", memory: value });
      else if (mnemo && under === "projects") ready.push({ kind: "project", project: parseMnemoProject(value) });
      else if (mnemo && under === "feedback") ready.push({ kind: "feedback", feedback: parseMnemoFeedback(value) });
      else if (mnemo && under === "attachments") ready.push({ kind: "file", file: parseMnemoFile(value) });
      else ready.push(toEntry(value, mnemo));
    };
    p.write(sample);
    return p;
  };

  /** The end of one JSON document: what it held is ready, or it is refused. */
  const finish = () => {
    if (!parser) {
      if (!head.trim()) throw new AppError("That file is empty.", 400);
      parser = start(head);
    }
    if (!parser.isEnded) parser.end();
  };

  try {
    for await (const s of pieces(chunks)) {
      if (s === NEXT_FILE) {
        // The next part of a split export: a document of its own.
        finish();
        while (ready.length) yield ready.shift()!;
        [parser, head] = [null, ""];
        continue;
      }
      if (!parser) {
        head += s;
        if (head.trimStart().length < 64 && head.length < 4096) continue; // enough to see the root and Mnemo's format key
        parser = start(head);
      } else {
        parser.write(s);
      }
      while (ready.length) yield ready.shift()!;
      await nextTick();
    }
    finish();
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError(started ? BROKEN : NOT_JSON, 400);
  }
  while (ready.length) yield ready.shift()!;
}
