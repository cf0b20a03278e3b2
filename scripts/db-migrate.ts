// `npm run db:migrate`: applies pending migrations to whichever database is configured.
// Beside a running app on the embedded database, the command runs inside the app (lib/ops/cli.ts).
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("db:migrate");
