// Files an export zip carries beside its conversations: ChatGPT's uploads and pictures, as `<file id>.dat` (with
// their names in `conversation_asset_file_names.json`) in current exports, or `file-<id>-<name>` in older ones. The
// zip is read once, as it arrives, and a file may come before or after the conversation naming it: each is written to
// a temporary directory as it inflates (never held in memory), and attached to its message once the zip is read.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The export's file ids: letters, digits, "-" and "_" (never a path). */
const ASSET = /^(file[-_][A-Za-z0-9]+)(?:(?:-(.+))|\.dat)?$/;
/** ChatGPT's map of `<id>.dat` to the file's name. */
export const ASSET_NAMES = /(^|\/)conversation_asset_file_names\.json$/i;
/** Past this a file is dropped unread (the attachment limits refuse far smaller ones anyway). */
const MAX_ASSET_BYTES = 256 * 1024 * 1024;
const MAX_ASSETS = 10_000;

type Asset = { file: string; name: string | null; bytes: number; tooLarge?: boolean };
export type ZipAssets = { dir: string | null; byId: Map<string, Asset>; names: Map<string, string> };

export const newZipAssets = (): ZipAssets => ({ dir: null, byId: new Map(), names: new Map() });

/** The export's id of a zip entry that is a file of a conversation (and its name when the entry's name has it). */
export function assetOf(entry: string): { id: string; name: string | null } | null {
  const m = ASSET.exec(entry.split("/").pop() ?? "");
  return m ? { id: m[1], name: m[2] ?? null } : null;
}

/** The sink for one entry's inflated bytes (written to the temporary directory); null when none is kept. */
export function keepAsset(assets: ZipAssets, entry: string): ((data: Uint8Array, final: boolean) => void) | null {
  const found = assetOf(entry);
  if (!found || assets.byId.has(found.id) || assets.byId.size >= MAX_ASSETS) return null;
  assets.dir ??= fs.mkdtempSync(path.join(os.tmpdir(), "mnemo-import-"));
  const asset: Asset = { file: path.join(assets.dir, String(assets.byId.size)), name: found.name, bytes: 0 };
  assets.byId.set(found.id, asset);
  let fd: number | null = fs.openSync(asset.file, "w", 0o600);
  return (data, final) => {
    if (fd !== null && !asset.tooLarge) {
      asset.bytes += data.length;
      if (asset.bytes > MAX_ASSET_BYTES) asset.tooLarge = true;
      else fs.writeSync(fd, data);
    }
    if ((final || asset.tooLarge) && fd !== null) {
      fs.closeSync(fd);
      fd = null;
    }
  };
}

/** Reads `conversation_asset_file_names.json` ({"<id>.dat": "name.ext"}) into the names of the files. */
export function readAssetNames(assets: ZipAssets, chunks: Uint8Array[]) {
  let map: unknown;
  try {
    map = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return;
  }
  if (!map || typeof map !== "object") return;
  for (const [key, name] of Object.entries(map as Record<string, unknown>)) {
    const found = assetOf(key);
    if (found && typeof name === "string" && name.trim()) assets.names.set(found.id, name.trim().slice(0, 300));
  }
}

/** One file's bytes and its name (the export's map, else the zip entry's), or why it cannot be had. */
export function readAsset(
  assets: ZipAssets,
  id: string,
): { bytes: Buffer; name: string | null } | "missing" | "too large" {
  const a = assets.byId.get(id);
  if (!a) return "missing";
  if (a.tooLarge) return "too large";
  return { bytes: fs.readFileSync(a.file), name: assets.names.get(id) ?? a.name };
}

/** Removes the temporary directory (always, once the import is done or has failed). */
export function dropAssets(assets: ZipAssets) {
  if (assets.dir) fs.rmSync(assets.dir, { recursive: true, force: true });
  assets.dir = null;
  assets.byId.clear();
}
