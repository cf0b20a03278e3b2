// Imported first by benchmark scripts (before they load the app's modules):
// a scratch data folder and secret, and DATABASE_URL moved to the test
// databases' variable, so each run creates fresh databases on the engines
// given and never touches the app's own.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

process.env.MNEMO_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-bench-"));
process.env.AUTH_SECRET ??= "bench-secret-bench-secret-bench-secret-00";
const pgUrl = process.env.DATABASE_URL;
delete process.env.DATABASE_URL;
if (pgUrl) process.env.TEST_DATABASE_URL = pgUrl;

/** The engines to measure: PGlite, and PostgreSQL when DATABASE_URL was given (BENCH_ENGINES=postgres for one). */
export const benchEngines = (): Array<"pglite" | "postgres"> => {
  const all: Array<"pglite" | "postgres"> = process.env.TEST_DATABASE_URL ? ["pglite", "postgres"] : ["pglite"];
  const only = process.env.BENCH_ENGINES?.split(",");
  return only ? all.filter((e) => only.includes(e)) : all;
};
