// Browser events between components that share no state: the thread list
// reloads when a chat starts, is renamed, or an import adds conversations.
export const THREADS_CHANGED = "mnemo:threads-changed";
