// Outgoing email through the operator's SMTP server (MNEMO_SMTP_URL), with
// nodemailer. Mail is sent after the response is decided and never awaited by
// it: a slow or failing mail server cannot change what a visitor sees (or how
// long it takes), so answers do not reveal which emails have accounts.
import nodemailer, { type Transporter } from "nodemailer";
import { getConfig } from "@/lib/config";
import { logError } from "@/lib/errors";

export type Mail = { to: string; subject: string; text: string };

let transport: { url: string; t: Transporter } | undefined;

export const mailConfigured = (): boolean => !!getConfig().mail;

/** An absolute link to a page of this instance (MNEMO_PUBLIC_URL), for emails. */
export function publicLink(path: string): string {
  const mail = getConfig().mail;
  if (!mail) throw new Error("publicLink needs MNEMO_PUBLIC_URL");
  return mail.publicUrl + path;
}

/** Sends one message now; throws when the server refuses it. */
export async function sendMail(mail: Mail): Promise<void> {
  const config = getConfig().mail;
  if (!config) return;
  if (transport?.url !== config.smtpUrl)
    transport = { url: config.smtpUrl, t: nodemailer.createTransport(config.smtpUrl) };
  await transport.t.sendMail({ from: config.from, to: mail.to, subject: mail.subject, text: mail.text });
}

/** Sends in the background; a failure is logged (with the recipient's domain only), never shown. */
export function sendMailLater(mail: Mail): void {
  sendMail(mail).catch((e) =>
    logError(globalThis.crypto.randomUUID().slice(0, 8), `mail to …@${mail.to.split("@")[1]}`, e, true),
  );
}
