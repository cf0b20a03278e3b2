// `npm run jobs:retention [-- --now <ISO time>]`: deletes messages older than
// MNEMO_MESSAGE_RETENTION_DAYS and temporary chats older than
// MNEMO_TEMPORARY_CHAT_HOURS, archives memories unused for
// MNEMO_MEMORY_EXPIRE_DAYS, then prints the counts as one JSON line.
// Schedule it daily (see docs/data-rights.md, "Retention"); reads hide expired data anyway.
// Beside a running app on the embedded database, the command runs inside the app (lib/ops/cli.ts).
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("jobs:retention");
