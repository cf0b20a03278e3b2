// Long imports hand the event loop back between pieces of work, so the server
// keeps answering (health checks, other users' chats) while a file is read.
import { setImmediate } from "node:timers/promises";

/** Lets pending I/O and timers run before the caller goes on. */
export function nextTick(): Promise<void> {
  return setImmediate();
}
