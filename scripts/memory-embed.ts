// `npm run memory:embed`: gives every memory and message its vector for the
// configured embedding model (MNEMO_EMBEDDING_MODEL or Admin → Model settings),
// with a progress bar. Rows already embedded by that model are skipped, so a
// run that stops (Ctrl+C, crash, endpoint outage) resumes where it left off.
// `-- --user <id>` limits it to one user. Prints one JSON line of counts last.
// Beside a running app on the embedded database, the command runs inside the app (lib/ops/cli.ts).
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("memory:embed");
