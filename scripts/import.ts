// `npm run import -- --user <email> <file>`: imports a conversation export
// (ChatGPT or Claude conversations.json, Open WebUI, LibreChat, Mnemo) into a
// user's account, as the data page does, reading the file as a stream.
// Progress goes to stderr; stdout gets one JSON line: format, conversations,
// messages, branches, duplicates, skipped (with reasons), memories.
import fs from "node:fs";
import { closeDb, getDb } from "@/lib/db/client";
import { startup } from "@/lib/startup";
import { importConversations } from "@/lib/import/run";
import { ANALYZE_AFTER_ROWS, refreshStatistics } from "@/lib/db/statistics";
import { getConfig } from "@/lib/config";

async function main() {
  const args = process.argv.slice(2);
  const u = args.indexOf("--user");
  const email = u >= 0 ? args[u + 1] : undefined;
  const file = args.filter((_, i) => i !== u && i !== u + 1)[0];
  if (!email || !file) {
    console.error("Usage: npm run import -- --user <email> <file>");
    process.exitCode = 2;
    return;
  }
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) {
    console.error(`No such file: ${file}`);
    process.exitCode = 2;
    return;
  }
  const max = getConfig().import.maxBytes;
  if (stat.size > max) {
    console.error(
      `That file is too large (${Math.round(stat.size / 1024 / 1024)} MB; MNEMO_IMPORT_MAX_MB allows ${Math.round(max / 1024 / 1024)}).`,
    );
    process.exitCode = 2;
    return;
  }
  await startup();
  const db = await getDb();
  const user = await db.user.findFirst({
    where: { email: { equals: email, mode: "insensitive" } },
    select: { id: true },
  });
  if (!user) {
    console.error(`No user with the email ${email}.`);
    process.exitCode = 2;
    return;
  }
  const started = Date.now();
  let last = 0;
  const { threadIds: _ids, ...report } = await importConversations(db, user.id, fs.createReadStream(file), (p) => {
    if (Date.now() - last < 1000) return;
    last = Date.now();
    process.stderr.write(
      `… ${p.conversations} conversations, ${p.messages} messages imported (${p.duplicates} already there, ${p.skipped} skipped)\n`,
    );
  });
  if (report.messages >= ANALYZE_AFTER_ROWS) await refreshStatistics(); // the embedded database's planner statistics
  console.log(JSON.stringify({ ...report, seconds: Math.round((Date.now() - started) / 100) / 10 }));
  if (report.error) process.exitCode = 1;
}

main()
  .catch((e) => {
    console.error(`import failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().then(() => process.exit()));
