// `npm run apikey -- --user <email> --name <name> [--scope chat,memory:read,memory:write] [--project <name>]`:
// makes a personal API key for a user and prints it (once) on stdout, for operators and automation. The creation is
// audited like one made on the settings page. Beside a running app on the embedded database, it runs inside the app.
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("apikey");
