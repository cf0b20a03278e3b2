// The embedded database (PGlite) has one owner process. PGlite keeps the whole
// database in the memory of the process that opened it and writes it back to
// its folder, so two processes on one folder overwrite each other's work: a
// chat written by the app was lost when `npm run import` ran beside it.
//
// The owner writes `<data>/pglite.owner.json` (mode 0600) when it opens the
// database: its pid, host, command, and, for the app, the loopback address of
// its operator endpoint (/api/ops) with a random secret. It touches the file
// every 10 s and removes it on exit. A second process that would open the same
// folder reads the file: when the owner is the app, operator commands are sent
// to it (lib/ops/cli.ts); otherwise the process is refused at once, with a
// message that names the owner. An owner is live when the file was touched in
// the last 30 s and, on the same host, its pid is still running (a crash or a
// kill -9 leaves a file that the next process takes over).
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export type Owner = {
  pid: number;
  host: string;
  command: string;
  startedAt: string;
  /** The app's operator endpoint (loopback), once it serves; null for a script. */
  opsUrl: string | null;
  /** Proves a caller can read the data folder; sent as a Bearer token to /api/ops. */
  secret: string;
};

const HEARTBEAT_MS = 10_000;
const STALE_MS = 30_000;
/** A takeover lock older than this was left by a process that died while taking over. */
const TAKEOVER_STALE_MS = 10_000;

export class DatabaseInUseError extends Error {
  constructor(
    readonly owner: Owner,
    dir: string,
  ) {
    super(
      `The embedded database in ${dir} is in use by ${describeOwner(owner)}. ` +
        `PGlite allows one process per data folder: ${
          owner.opsUrl
            ? "operator commands (npm run import, memory:embed, jobs:*, keys:rotate, worker -- --once, db:migrate) are sent to the running app; other programs must wait until it stops."
            : "wait until it finishes, or stop it."
        } If no such process is running, delete ${ownerFile(dir)}.`,
    );
  }
}

export function describeOwner(o: Owner): string {
  return `${o.command} (pid ${o.pid}${o.host === os.hostname() ? "" : ` on ${o.host}`}, since ${o.startedAt})`;
}

export function ownerFile(pgliteDir: string): string {
  return path.join(path.dirname(pgliteDir), `${path.basename(pgliteDir)}.owner.json`);
}

/** The live owner of the folder, or null when nobody (or only a crashed process) holds it. */
export function liveOwner(pgliteDir: string): Owner | null {
  const file = ownerFile(pgliteDir);
  let owner: Owner;
  let touched: number;
  try {
    touched = fs.statSync(file).mtimeMs;
  } catch {
    return null; // absent
  }
  if (Date.now() - touched > STALE_MS) return null;
  try {
    owner = JSON.parse(fs.readFileSync(file, "utf8")) as Owner;
  } catch {
    // Not whole yet: a process is writing it this moment (one that died while writing it leaves it to go stale).
    return {
      pid: 0,
      host: os.hostname(),
      command: "a process that is starting",
      startedAt: "",
      opsUrl: null,
      secret: "",
    };
  }
  if (owner.host === os.hostname() && !processRuns(owner.pid)) return null;
  return owner;
}

function processRuns(pid: number): boolean {
  if (pid === process.pid) return false; // our own file from before a restart in the same pid (containers)
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // runs, as another user
  }
}

type Claim = { owner: Owner; file: string; timer: NodeJS.Timeout };
// On globalThis: Next.js bundles instrumentation and route handlers apart, each with its own module state.
const g = globalThis as typeof globalThis & { __mnemoClaims?: Map<string, Claim> };
const claims = (g.__mnemoClaims ??= new Map<string, Claim>());

/**
 * Makes this process the folder's owner, or throws DatabaseInUseError. Two
 * processes starting at the same instant: the file is created exclusively, so
 * one of them is refused.
 */
export function claimEmbeddedDatabase(pgliteDir: string): void {
  if (claims.has(pgliteDir)) return;
  fs.mkdirSync(path.dirname(pgliteDir), { recursive: true });
  const file = ownerFile(pgliteDir);
  const owner: Owner = {
    pid: process.pid,
    host: os.hostname(),
    command: commandName(),
    startedAt: new Date().toISOString(),
    opsUrl: null,
    secret: crypto.randomBytes(32).toString("base64url"),
  };
  // Long enough to outlast a takeover lock left by a process that died holding it.
  const deadline = Date.now() + 2 * TAKEOVER_STALE_MS;
  for (;;) {
    try {
      fs.writeFileSync(file, JSON.stringify(owner), { flag: "wx", mode: 0o600 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST" || Date.now() > deadline) throw e;
    }
    const held = liveOwner(pgliteDir);
    if (held) throw new DatabaseInUseError(held, pgliteDir);
    removeCrashedOwner(pgliteDir);
  }
  const timer = setInterval(() => touch(file), HEARTBEAT_MS);
  timer.unref();
  claims.set(pgliteDir, { owner, file, timer });
  process.once("exit", () => releaseEmbeddedDatabase(pgliteDir));
}

/**
 * Removes a crashed owner's file, under a takeover lock (a directory: mkdir is atomic): several processes starting
 * together after a crash all find the file stale, and one that removed it after another had already replaced it
 * with its own would leave two owners. The lock's holder checks again before removing; the others wait their turn
 * and then find the new owner. Returns when the caller may try to create the file again.
 */
function removeCrashedOwner(pgliteDir: string) {
  const file = ownerFile(pgliteDir);
  const lock = `${file}.takeover`;
  try {
    fs.mkdirSync(lock);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
    if (age > TAKEOVER_STALE_MS) fs.rmSync(lock, { recursive: true, force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // another is taking over: wait
    return;
  }
  try {
    if (!liveOwner(pgliteDir)) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function touch(file: string) {
  try {
    const now = new Date();
    fs.utimesSync(file, now, now);
  } catch {
    // removed by hand: the next process may take over; nothing to do here
  }
}

/** Records the app's operator endpoint in the owner file (the app calls it once it serves). */
export function announceOpsEndpoint(pgliteDir: string, opsUrl: string): Owner | null {
  const claim = claims.get(pgliteDir);
  if (!claim) return null;
  claim.owner = { ...claim.owner, opsUrl };
  fs.writeFileSync(claim.file, JSON.stringify(claim.owner), { mode: 0o600 });
  return claim.owner;
}

/** This process's claim on the folder, if it has one. */
export function ownClaim(pgliteDir: string): Owner | null {
  return claims.get(pgliteDir)?.owner ?? null;
}

export function releaseEmbeddedDatabase(pgliteDir: string): void {
  const claim = claims.get(pgliteDir);
  if (!claim) return;
  clearInterval(claim.timer);
  claims.delete(pgliteDir);
  try {
    const onDisk = JSON.parse(fs.readFileSync(claim.file, "utf8")) as Owner;
    if (onDisk.pid === process.pid && onDisk.secret === claim.owner.secret) fs.rmSync(claim.file, { force: true });
  } catch {
    // already gone
  }
}

/** "npm run import", "the Mnemo app", or the script's file name. */
function commandName(): string {
  if (process.env.NEXT_RUNTIME) return "the Mnemo app";
  const script = process.env.npm_lifecycle_event;
  if (script) return `npm run ${script}`;
  return path.basename(process.argv[1] ?? "node");
}
