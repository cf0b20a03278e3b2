// `npm run keys:rotate [-- --data-keys]`: re-wraps user keys under
// MNEMO_ENCRYPTION_KEY (reading MNEMO_ENCRYPTION_KEY_PREVIOUS), encrypts rows
// still in plain text, and with --data-keys re-encrypts everything under new
// per-user data keys. Prints the counts as one JSON line.
// Beside a running app on the embedded database, the command runs inside the app (lib/ops/cli.ts).
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("keys:rotate");
