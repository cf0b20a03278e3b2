// `npm run jobs:retention [-- --now <ISO time>]`: deletes messages older than
// MNEMO_MESSAGE_RETENTION_DAYS and temporary chats older than
// MNEMO_TEMPORARY_CHAT_HOURS, archives memories unused for
// MNEMO_MEMORY_EXPIRE_DAYS, then prints the counts as one JSON line.
// Schedule it daily (see README, "Retention"); reads hide expired data anyway.
import { closeDb, getDb } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { retentionSettings, runRetention } from "@/lib/account/retention";

async function main() {
  const i = process.argv.indexOf("--now");
  const now = i > 0 ? new Date(process.argv[i + 1]) : new Date();
  if (Number.isNaN(now.getTime())) throw new Error("--now needs an ISO date-time, e.g. 2026-01-31T00:00:00Z");
  const db = await getDb();
  const settings = retentionSettings();
  const counts = await runRetention(db, now, settings, getConfig().memory.expireUnusedDays);
  console.log(
    JSON.stringify({
      at: now.toISOString(),
      messageRetentionDays: settings.messageDays,
      temporaryChatHours: settings.temporaryChatHours,
      deleted: counts,
    }),
  );
}

main()
  .catch((e) => {
    console.error(`jobs:retention failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().then(() => process.exit()));
