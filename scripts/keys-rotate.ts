// `npm run keys:rotate [-- --data-keys]`: re-wraps user keys under
// MNEMO_ENCRYPTION_KEY (reading MNEMO_ENCRYPTION_KEY_PREVIOUS), encrypts rows
// still in plain text, and with --data-keys re-encrypts everything under new
// per-user data keys. Prints the counts as one JSON line.
import { closeDb, getDb } from "@/lib/db/client";
import { rotateKeys } from "@/lib/crypto/rotate";

async function main() {
  const counts = await rotateKeys(await getDb(), { dataKeys: process.argv.includes("--data-keys") });
  console.log(JSON.stringify(counts));
}

main()
  .catch((e) => {
    console.error(`keys:rotate failed: ${(e as Error).message}`);
    process.exitCode = 1;
  })
  .finally(() => closeDb().then(() => process.exit()));
