// `npm run jobs:consolidate`: consolidates every user's long-term memory
// (lib/memory/consolidate.ts: merge duplicates, settle contradictions, expire
// low-value memories, mark stale procedures) and prints one JSON line of counts.
// Schedule it daily, like retention. Safe with several instances: each user's
// run is a queued job with a key shared by every instance for the hour, claimed
// with FOR UPDATE SKIP LOCKED, so one instance runs it and the others move on.
// Beside a running app on the embedded database, the command runs inside the app (lib/ops/cli.ts).
import { runOperatorCli } from "@/lib/ops/cli";

void runOperatorCli("jobs:consolidate");
