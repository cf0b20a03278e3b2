// OpenAI's request schemas allow null for every optional field, and its clients send it for "not set" (the Python SDK
// when a variable is None): null is read as absent.

/** The object without its null fields. */
export function present<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null)) as { [K in keyof T]: Exclude<T[K], null> };
}
