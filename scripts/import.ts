// `npm run import -- --user <email> <file>`: imports a conversation export
// (ChatGPT or Claude conversations.json, Open WebUI, LibreChat, Mnemo) into a
// user's account, as the data page does, reading the file as a stream.
// Progress goes to stderr; stdout gets one JSON line: format, conversations,
// messages, branches, duplicates, skipped (with reasons), memories.
// Beside a running app on the embedded database, the command runs inside the app (lib/ops/cli.ts).
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("import");
