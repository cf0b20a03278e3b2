// Passwords: a user changes their own (the current one checked, the new one
// confirmed), an admin sets a temporary one that must be changed, and a change
// ends every other session but the one that made it.
import { WrongPasswordError } from "@/lib/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { hashPassword } from "@/lib/auth/password";
import { verifyCredentials } from "@/lib/auth/users";
import { changePassword, sessionOutlivesPasswordChange, setTemporaryPassword } from "@/lib/auth/password-change";

describe.each(engines)("passwords on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  const newUser = async () => {
    const email = `pw-${engine}-${n++}@example.com`;
    const u = await t.db.user.create({ data: { email, passwordHash: await hashPassword("original-password") } });
    return { id: u.id, email };
  };
  const signIn = (email: string, password: string) => verifyCredentials(t.db, { email, password }, "198.51.100.7");

  it("changes a password only with the current one; other sessions end, this one stays", async () => {
    const u = await newUser();
    const oldSession = { sid: "old-device", authAt: Date.now() - 60_000 };
    await expect(
      changePassword(t.db, u.id, "this-device", {
        current: "wrong-password",
        next: "brand-new-secret",
        confirm: "brand-new-secret",
      }),
    ).rejects.toBeInstanceOf(WrongPasswordError);
    await expect(
      changePassword(t.db, u.id, "this-device", {
        current: "original-password",
        next: "brand-new-secret",
        confirm: "brand-new-secrex",
      }),
    ).rejects.toThrow(/differ/);
    await expect(
      changePassword(t.db, u.id, "this-device", { current: "original-password", next: "short", confirm: "short" }),
    ).rejects.toThrow(/at least/);
    await changePassword(t.db, u.id, "this-device", {
      current: "original-password",
      next: "brand-new-secret",
      confirm: "brand-new-secret",
    });
    expect(await signIn(u.email, "original-password")).toBeNull();
    expect((await signIn(u.email, "brand-new-secret"))?.id).toBe(u.id);
    const row = await t.db.user.findUniqueOrThrow({ where: { id: u.id } });
    expect(sessionOutlivesPasswordChange(row, oldSession)).toBe(false);
    expect(sessionOutlivesPasswordChange(row, { sid: "this-device", authAt: oldSession.authAt })).toBe(true);
    expect(sessionOutlivesPasswordChange(row, { sid: "new-sign-in", authAt: Date.now() + 1 })).toBe(true);
  });

  it("an admin's temporary password signs in once and must be changed", async () => {
    const u = await newUser();
    const temporary = await setTemporaryPassword(t.db, u.id);
    expect(temporary).toMatch(/^[A-Za-z2-9]{16}$/);
    expect(await signIn(u.email, "original-password")).toBeNull();
    expect((await signIn(u.email, temporary))?.id).toBe(u.id);
    expect((await t.db.user.findUniqueOrThrow({ where: { id: u.id } })).mustChangePassword).toBe(true);
    await changePassword(t.db, u.id, "sid-1", {
      current: temporary,
      next: "my-own-password",
      confirm: "my-own-password",
    });
    expect((await t.db.user.findUniqueOrThrow({ where: { id: u.id } })).mustChangePassword).toBe(false);
  });
});
