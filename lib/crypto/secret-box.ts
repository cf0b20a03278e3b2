// AES-256-GCM for small secrets the app stores (e.g. the model API key an admin
// enters). The key is derived from AUTH_SECRET with HKDF, so the database alone
// is not enough to read them. Format: v1.<iv>.<tag>.<ciphertext> (base64url).
import crypto from "node:crypto";
import { getConfig } from "@/lib/config";

function key(purpose: string, secret = getConfig().authSecret): Buffer {
  return Buffer.from(crypto.hkdfSync("sha256", secret, "mnemo-secret-box", purpose, 32));
}

export function seal(plaintext: string, purpose: string, secret?: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv("aes-256-gcm", key(purpose, secret), iv);
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
    .join(".");
}

export function open(sealed: string, purpose: string, secret?: string): string {
  const [v, iv, tag, ct] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || ct === undefined) throw new Error("Not a sealed value");
  const decipher = crypto.createDecipheriv("aes-256-gcm", key(purpose, secret), Buffer.from(iv, "base64url"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(ct, "base64url")), decipher.final()]).toString("utf8");
}
