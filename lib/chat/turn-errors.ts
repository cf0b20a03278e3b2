// How an answer can end badly, in the words the user reads under it: the daily limit, a model that went silent, one
// that only thought, and the warning for a prompt the server cut.

/** The user's daily limit is reached: the answer fails with this sentence (the question stays saved). */
export class UsageLimitError extends Error {}

export class ModelIdleError extends Error {
  constructor(seconds: number) {
    super(`The model stopped sending its answer (nothing for ${seconds} seconds). Retry to try again.`);
  }
}

/** A reasoning model that ended while still thinking (its output limit, usually): there is no answer to show. */
export class OnlyThinkingError extends Error {
  constructor() {
    super(
      "The model was still thinking when it stopped, and gave no answer (it may have hit its output limit). Retry to try again.",
    );
  }
}

/** What an answer whose prompt the server cut says under it. */
export function promptCutNotice({ sent, reported }: { sent: number; reported: number }): string {
  const n = (x: number) => x.toLocaleString("en-US");
  return (
    `The model server read only ${n(reported)} of about ${n(sent)} tokens Mnemo sent, so this answer may have ` +
    `missed your memories or the start of the chat. Later messages are sent shorter to fit; for the whole ` +
    `conversation, give the model a longer context (Ollama: OLLAMA_CONTEXT_LENGTH=8192 or more).`
  );
}
