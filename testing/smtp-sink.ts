// A local SMTP server that keeps every message it receives, for tests of the
// emails Mnemo sends (smtp-server receives, mailparser decodes).
import { SMTPServer } from "smtp-server";
import { simpleParser } from "mailparser";
import type { AddressInfo } from "node:net";

export type ReceivedMail = { to: string; subject: string; text: string };

export type SmtpSink = {
  url: string;
  messages: ReceivedMail[];
  /** Waits for a message to `to` (the newest one received after `since` messages). */
  waitFor(to: string, since?: number, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
};

export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, done) {
      simpleParser(stream)
        .then((m) => {
          for (const rcpt of session.envelope.rcptTo)
            messages.push({ to: rcpt.address, subject: m.subject ?? "", text: m.text ?? "" });
          done();
        })
        .catch(done);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(to, since = 0, timeoutMs = 5000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const found = messages
          .slice(since)
          .filter((m) => m.to === to)
          .at(-1);
        if (found) return found;
        if (Date.now() > end) throw new Error(`no email to ${to} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
