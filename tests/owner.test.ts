// The embedded database's one owner (lib/db/owner.ts), across real processes: after a crash left its owner file,
// several processes starting at once (the app, a worker, an operator's command) must not all take the folder over;
// two owners would each write their own copy of the database over the other's.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ownerFile } from "@/lib/db/owner";

const run = promisify(execFile);

async function claimTogether(dir: string, processes: number): Promise<string[]> {
  // Every child loaded and waiting before the moment comes; each holds what it claimed well past it, so a child
  // that loaded late on a busy machine still finds the owner there.
  const startAt = Date.now() + 3000;
  const args = ["--import", "tsx", "testing/claim-run.ts", dir, String(startAt), String(startAt + 6000)];
  const outs = await Promise.all(
    Array.from({ length: processes }, () => run(process.execPath, args, { timeout: 30_000 })),
  );
  return outs.map((o) => o.stdout.trim());
}

describe("the embedded database's owner, across processes", () => {
  it("after a crash, of several processes starting at once exactly one takes the folder over", async () => {
    for (let round = 0; round < 2; round++) {
      const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "owner-")), "pglite");
      // A crashed owner's file: a pid that runs no more, last touched long ago.
      const dead = await run(process.execPath, ["-e", "console.log(process.pid)"]);
      const file = ownerFile(dir);
      fs.writeFileSync(
        file,
        JSON.stringify({ pid: Number(dead.stdout), host: os.hostname(), command: "npm start", startedAt: "x" }),
      );
      const old = new Date(Date.now() - 120_000);
      fs.utimesSync(file, old, old);
      const said = await claimTogether(dir, 6);
      expect(
        said.filter((s) => s === "owner"),
        `round ${round}: ${said.join(", ")}`,
      ).toHaveLength(1);
      expect(said.filter((s) => s === "refused")).toHaveLength(5);
    }
  }, 120_000);

  it("a takeover lock left by a process that died holding it holds the folder only for a while", async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "owner-")), "pglite");
    const dead = await run(process.execPath, ["-e", "console.log(process.pid)"]);
    const file = ownerFile(dir);
    fs.writeFileSync(file, JSON.stringify({ pid: Number(dead.stdout), host: os.hostname(), command: "npm start" }));
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(file, old, old);
    fs.mkdirSync(`${file}.takeover`);
    const lockedAt = new Date(Date.now() - 8_000); // two seconds before it counts as left behind
    fs.utimesSync(`${file}.takeover`, lockedAt, lockedAt);
    expect(await claimTogether(dir, 1)).toEqual(["owner"]);
  }, 60_000);
});
