// A second app instance for one step of a cross-process test: on DATABASE_URL, either answers one chat turn
// (`turn <userId> <threadId> <message>`, printing the last event as JSON) or saves the model settings as an admin
// would (`forget`: what the instances learned about the model server is forgotten everywhere).
import { closeDb, getDb } from "@/lib/db/client";
import { runTurn } from "@/lib/chat/turn";
import { forgetEverywhere } from "@/lib/llm/server-notes";

const db = await getDb();
const [step, userId, threadId, content] = process.argv.slice(2);
if (step === "forget") {
  await forgetEverywhere(db);
} else {
  let last: unknown = null;
  for await (const event of runTurn(db, userId, { kind: "send", threadId, content })) last = event;
  console.log(JSON.stringify(last));
}
await closeDb();
process.exit(0);
