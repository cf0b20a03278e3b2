// Every column that holds a user's words, sealed with their data key when
// encryption at rest is on: the one list that key rotation re-encrypts
// (lib/crypto/rotate.ts) and the privacy check scans (testing/privacy-checks.ts).
// A new column of user text belongs here; its writer seals it with the user's
// cipher (seal, or sealJson for JSON columns).
export type SealedColumn = {
  name: string;
  /** A JSON column holding a sealed string (sealJson), or plain JSON before encryption was on. */
  json?: boolean;
  /** The column of keyed search tokens derived from it. */
  tokens?: string;
};

export const SEALED_COLUMNS: ReadonlyArray<{ table: string; columns: SealedColumn[] }> = [
  { table: "User", columns: [{ name: "aboutSummary" }] },
  { table: "Project", columns: [{ name: "name" }, { name: "instructions" }] },
  { table: "ApiKey", columns: [{ name: "name" }] },
  // Where memories went: the model and the server (the memory ids and the client kind are not user text).
  { table: "MemorySend", columns: [{ name: "model" }, { name: "endpoint" }] },
  { table: "Thread", columns: [{ name: "title" }] },
  {
    table: "Item",
    columns: [
      { name: "content", tokens: "searchTokens" },
      { name: "toolCalls", json: true },
    ],
  },
  { table: "Summary", columns: [{ name: "content" }] },
  // The file itself (base64), its name and its text.
  { table: "Attachment", columns: [{ name: "name" }, { name: "data" }, { name: "text" }] },
  { table: "AttachmentPassage", columns: [{ name: "content", tokens: "searchTokens" }] },
  {
    table: "Memory",
    columns: [
      { name: "text", tokens: "searchTokens" },
      { name: "steps", json: true },
    ],
  },
  // Reasons are fixed phrases that name other memories by id (lib/memory/long-term.ts retireMemory): not sealed.
  { table: "MemoryVersion", columns: [{ name: "oldText" }, { name: "newText" }] },
  { table: "Feedback", columns: [{ name: "comment" }] },
];
