import type { AttachmentMeta, SourceView } from "@/lib/attachments/store";

// What the chat UI holds for each message (serialisable from server actions).
export type UiItem = {
  id: string;
  parentId: string | null;
  role: "user" | "assistant" | "system" | "tool";
  content: string;
  status: "streaming" | "complete" | "stopped" | "failed" | "interrupted";
  error: string | null;
  model: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  siblingIds: string[];
  /** Mnemo's memory tools the model called, each with its result (JSON, as the model read it) when known. */
  toolCalls: Array<{ id: string; name: string; arguments: string; result?: string }> | null;
  /** A tool note brought in by an import (another app's tool call and result): shown, folded. */
  toolName?: string | null;
  /** The memories the answer drew on (`mine`: in a shared project, the reader's own memory, shown to them alone). */
  memoriesUsed: Array<{ id: string; text: string; mine?: boolean }>;
  /** The other memories the model was given with the question (absent on old answers). */
  alsoGiven?: Array<{ id: string; text: string; mine?: boolean }>;
  /** When it was written (ISO; absent on messages still being sent). */
  createdAt?: string;
  /** A message's files; an answer's document passages (absent while streaming). */
  attachments?: AttachmentMeta[];
  sources?: SourceView[];
  /** The user's rating of this answer (absent on answers just streamed). */
  feedback?: { rating: 1 | -1 | null; comment: string | null } | null;
};
