// Environment for unit/integration tests: a fixed secret, a scratch data folder,
// and no model or database settings leaking in from the developer's shell.
import os from "node:os";
import path from "node:path";
import fs from "node:fs";
import { beforeEach } from "vitest";
import { forgetRecentVectors } from "@/lib/llm/recent-vectors";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-test-"));
process.env.MNEMO_DATA_DIR = scratch;
process.env.AUTH_SECRET = "test-secret-test-secret-test-secret-test";
delete process.env.DATABASE_URL;
delete process.env.OPENAI_API_KEY;
delete process.env.OPENAI_BASE_URL;
delete process.env.MNEMO_CHAT_MODEL;
delete process.env.MNEMO_MEMORY_MODEL;
delete process.env.MNEMO_EMBEDDING_MODEL;
// Recall by words only, as most tests were written for; tests/builtin-embeddings.test.ts turns the built-in encoder on.
process.env.MNEMO_BUILTIN_EMBEDDINGS = "off";

// The test model server's vectors are scripted per test: a vector one test was given is not another's.
beforeEach(() => forgetRecentVectors());
