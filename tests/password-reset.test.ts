// Forgotten passwords by email, and registration that does not reveal which
// emails have accounts. Mail goes to a real SMTP server on loopback (smtp-sink).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { startSmtpSink, type SmtpSink } from "@/testing/smtp-sink";
import { getConfig, type Config } from "@/lib/config";
import { hashPassword } from "@/lib/auth/password";
import { registerAccount, verifyCredentials } from "@/lib/auth/users";
import { requestPasswordReset, resetLinkValid, resetPassword, RESET_MINUTES } from "@/lib/auth/password-reset";
import { sessionOutlivesPasswordChange } from "@/lib/auth/password-change";

let sink: SmtpSink;
const config = getConfig() as Config;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(async () => sink?.close());
const withMail = () =>
  (config.mail = { smtpUrl: sink.url, from: "Mnemo <mnemo@example.com>", publicUrl: "https://mnemo.example.com" });
afterEach(() => (config.mail = undefined));

const linkToken = (text: string) => /https:\/\/mnemo\.example\.com\/reset-password\?token=([\w-]+)/.exec(text)?.[1];

describe.each(engines)("password reset and registration on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
    await t.db.user.create({ data: { email: `first-admin-${engine}@example.com`, role: "ADMIN" } });
  });
  afterAll(async () => t?.close());
  const ip = () => `203.0.113.${n++ % 250}`;
  const newUser = async () => {
    const email = `reset-${engine}-${n++}@example.com`;
    const u = await t.db.user.create({ data: { email, passwordHash: await hashPassword("original-password") } });
    return { id: u.id, email };
  };
  const signIn = (email: string, password: string) => verifyCredentials(t.db, { email, password }, ip());

  it("emails a one-hour link that sets a new password once and ends every session", async () => {
    withMail();
    const u = await newUser();
    const since = sink.messages.length;
    await requestPasswordReset(t.db, u.email.toUpperCase(), ip());
    const mail = await sink.waitFor(u.email, since);
    expect(mail.subject).toMatch(/Reset your Mnemo password/);
    const token = linkToken(mail.text)!;
    expect(token).toBeTruthy();
    expect(await resetLinkValid(t.db, token)).toBe(true);
    // The token is stored hashed: the database alone cannot make a link.
    expect(await t.db.verificationToken.count({ where: { token } })).toBe(0);

    await expect(resetPassword(t.db, token, { next: "brand-new-secret", confirm: "brand-new-secrex" })).rejects.toThrow(
      /differ/,
    );
    await resetPassword(t.db, token, { next: "brand-new-secret", confirm: "brand-new-secret" });
    expect(await signIn(u.email, "original-password")).toBeNull();
    expect((await signIn(u.email, "brand-new-secret"))?.id).toBe(u.id);
    const row = await t.db.user.findUniqueOrThrow({ where: { id: u.id } });
    expect(sessionOutlivesPasswordChange(row, { sid: "old-device", authAt: Date.now() - 60_000 })).toBe(false);
    // Used up.
    expect(await resetLinkValid(t.db, token)).toBe(false);
    await expect(
      resetPassword(t.db, token, { next: "another-new-secret", confirm: "another-new-secret" }),
    ).rejects.toThrow(/expired or was already used/);
  });

  it("a newer link replaces the older one; an expired link is refused", async () => {
    withMail();
    const u = await newUser();
    let since = sink.messages.length;
    await requestPasswordReset(t.db, u.email, ip());
    const first = linkToken((await sink.waitFor(u.email, since)).text)!;
    since = sink.messages.length;
    await requestPasswordReset(t.db, u.email, ip());
    const second = linkToken((await sink.waitFor(u.email, since)).text)!;
    expect(await resetLinkValid(t.db, first)).toBe(false);
    expect(await resetLinkValid(t.db, second)).toBe(true);
    const later = new Date(Date.now() + (RESET_MINUTES + 1) * 60_000);
    await expect(
      resetPassword(t.db, second, { next: "brand-new-secret", confirm: "brand-new-secret" }, later),
    ).rejects.toThrow(/expired/);
    expect((await signIn(u.email, "original-password"))?.id).toBe(u.id);
  });

  it("answers the same for an unknown email and sends nothing", async () => {
    withMail();
    const since = sink.messages.length;
    await expect(requestPasswordReset(t.db, `nobody-${engine}@example.com`, ip())).resolves.toBeUndefined();
    await new Promise((r) => setTimeout(r, 300));
    expect(sink.messages.slice(since).filter((m) => m.to === `nobody-${engine}@example.com`)).toEqual([]);
  });

  it("without email configured, says to ask an administrator", async () => {
    const u = await newUser();
    await expect(requestPasswordReset(t.db, u.email, ip())).rejects.toThrow(/Ask an administrator/);
  });

  it("registration with a taken email changes nothing and looks like a new one; the owner is told by email", async () => {
    withMail();
    const u = await newUser();
    const since = sink.messages.length;
    expect(await registerAccount(t.db, { email: u.email, password: "attacker-password" }, ip())).toBeNull();
    expect((await signIn(u.email, "original-password"))?.id).toBe(u.id);
    expect((await sink.waitFor(u.email, since)).subject).toMatch(/tried to create a Mnemo account/);

    const fresh = `new-${engine}-${n++}@example.com`;
    const created = await registerAccount(t.db, { email: fresh, password: "a long enough password" }, ip());
    expect(created?.email).toBe(fresh);
    expect(created?.role).toBe("USER");
    expect((await sink.waitFor(fresh, since)).subject).toMatch(/account is ready/);
  });
});
