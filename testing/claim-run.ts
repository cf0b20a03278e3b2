// One process claiming an embedded database folder for a cross-process test (tests/owner.test.ts): waits until the
// given start time (so several start together), claims, prints "owner" or "refused", then holds the claim until the
// given end time (so one that loaded late still finds the owner there).
import { claimEmbeddedDatabase, DatabaseInUseError } from "@/lib/db/owner";

const [dir, startAt, holdUntil] = process.argv.slice(2);
await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
try {
  claimEmbeddedDatabase(dir);
  console.log("owner");
} catch (e) {
  if (!(e instanceof DatabaseInUseError)) throw e;
  console.log("refused");
}
await new Promise((r) => setTimeout(r, Math.max(0, Number(holdUntil) - Date.now())));
process.exit(0);
