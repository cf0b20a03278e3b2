process.env.MNEMO_SIGNIN_COOLDOWN_SECONDS = "1";
import { EmailTakenError, LastAdminError, RateLimitedError } from "@/lib/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import {
  activeUser,
  createUser,
  recordSignOut,
  registerWithPassword,
  setDisabled,
  setRole,
  verifyCredentials,
} from "@/lib/auth/users";
import { DEVICE_COOKIE, deviceToken } from "@/lib/auth/device";
import { hashPassword, verifyPassword } from "@/lib/auth/password";

const PW = "correct horse battery";

describe("password hashing", () => {
  it("uses scrypt with a random salt and verifies only the right password", async () => {
    const a = await hashPassword(PW);
    const b = await hashPassword(PW);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword(PW, a)).toBe(true);
    expect(await verifyPassword(PW + "x", a)).toBe(false);
    expect(await verifyPassword(PW, "garbage")).toBe(false);
  });
});

describe.each(engines)("accounts on %s", (engine) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());

  it("first account on an empty database is admin, later ones are users", async () => {
    const first = await registerWithPassword(t.db, { email: "  First@Example.COM ", password: PW }, "10.0.0.1");
    expect(first.email).toBe("first@example.com");
    expect(first.role).toBe("ADMIN");
    expect(first.passwordHash).not.toContain(PW);
    const second = await registerWithPassword(t.db, { email: "second@example.com", password: PW }, "10.0.0.1");
    expect(second.role).toBe("USER");
  });

  it("refuses a duplicate email whatever its case", async () => {
    await expect(
      registerWithPassword(t.db, { email: "FIRST@example.com", password: PW }, "10.0.0.2"),
    ).rejects.toBeInstanceOf(EmailTakenError);
  });

  it("rejects short passwords and bad emails with readable messages", async () => {
    await expect(registerWithPassword(t.db, { email: "x@example.com", password: "short" }, "10.0.0.3")).rejects.toThrow(
      /at least 10 characters/,
    );
    await expect(registerWithPassword(t.db, { email: "not-an-email", password: PW }, "10.0.0.3")).rejects.toThrow(
      /valid email/,
    );
  });

  it("checks credentials without saying which part was wrong", async () => {
    expect((await verifyCredentials(t.db, { email: "first@example.com", password: PW }, "10.1.0.1"))?.email).toBe(
      "first@example.com",
    );
    expect(
      await verifyCredentials(t.db, { email: "first@example.com", password: "wrong password" }, "10.1.0.1"),
    ).toBeNull();
    expect(await verifyCredentials(t.db, { email: "nobody@example.com", password: PW }, "10.1.0.1")).toBeNull();
    expect(await verifyCredentials(t.db, { email: 42 }, "10.1.0.1")).toBeNull();
  });

  it("a disabled user can neither sign in nor keep a session; re-enabling restores both", async () => {
    const u = await registerWithPassword(t.db, { email: "third@example.com", password: PW }, "10.0.0.4");
    await setDisabled(t.db, u.id, true);
    expect(await activeUser(t.db, u.id)).toBeNull();
    expect(await verifyCredentials(t.db, { email: "third@example.com", password: PW }, "10.1.0.2")).toBeNull();
    await setDisabled(t.db, u.id, false);
    expect((await activeUser(t.db, u.id))?.id).toBe(u.id);
    await t.db.user.delete({ where: { id: u.id } });
    expect(await activeUser(t.db, u.id)).toBeNull();
  });

  it("a signed-out session stays out even if its cookie comes back; other sessions of the user stay in", async () => {
    const u = await registerWithPassword(t.db, { email: "signout@example.com", password: PW }, "10.0.0.5");
    expect((await activeUser(t.db, u.id, "laptop"))?.id).toBe(u.id);
    await recordSignOut(t.db, { sub: u.id, sid: "laptop", exp: Math.floor(Date.now() / 1000) + 3600 });
    await recordSignOut(t.db, { sub: u.id, sid: "laptop", exp: Math.floor(Date.now() / 1000) + 3600 }); // twice is fine
    expect(await activeUser(t.db, u.id, "laptop")).toBeNull();
    expect((await activeUser(t.db, u.id, "phone"))?.id).toBe(u.id);
  });

  it("never leaves the app without an active admin", async () => {
    const admin = await t.db.user.findFirstOrThrow({ where: { role: "ADMIN" } });
    await expect(setRole(t.db, admin.id, "USER")).rejects.toBeInstanceOf(LastAdminError);
    await expect(setDisabled(t.db, admin.id, true)).rejects.toBeInstanceOf(LastAdminError);
    const other = await t.db.user.findUniqueOrThrow({ where: { email: "second@example.com" } });
    await setRole(t.db, other.id, "ADMIN");
    await setRole(t.db, admin.id, "USER");
    expect((await t.db.user.findUniqueOrThrow({ where: { id: admin.id } })).role).toBe("USER");
    await setRole(t.db, admin.id, "ADMIN");
  });

  it("sign-in is limited per email across instances; the limit admits no extra guess; the owner still gets in", async () => {
    // Two PrismaClients stand for two app instances (on PostgreSQL each has its own pool).
    const other = await t.newClient();
    const email = "second@example.com";
    const attempts = Array.from({ length: 10 }, (_, i) =>
      verifyCredentials(i % 2 ? other.db : t.db, { email, password: "wrong password" }, `10.2.0.${i}`),
    );
    expect(await Promise.all(attempts)).toEqual(Array(10).fill(null));
    // The 10th failure started the cooldown: the 11th guess, from anywhere, is not evaluated.
    await expect(verifyCredentials(t.db, { email, password: "wrong again" }, "10.2.1.0")).rejects.toBeInstanceOf(
      RateLimitedError,
    );
    await expect(verifyCredentials(other.db, { email, password: PW }, "10.2.1.2")).rejects.toBeInstanceOf(
      RateLimitedError,
    );
    // A browser that signed in to this account before is not held back by others' failures…
    const cookie = `${DEVICE_COOKIE}=${deviceToken(email)}`;
    expect((await verifyCredentials(t.db, { email, password: PW }, "10.2.1.4", { cookie }))?.email).toBe(email);
    // …a device cookie made for another account does not count…
    const foreign = `${DEVICE_COOKIE}=${deviceToken("someone@example.com")}`;
    await expect(
      verifyCredentials(t.db, { email, password: PW }, "10.2.1.5", { cookie: foreign }),
    ).rejects.toBeInstanceOf(RateLimitedError);
    // …and on a new browser the owner waits one cooldown, then the right password works.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await verifyCredentials(other.db, { email, password: PW }, "10.2.1.3"))?.email).toBe(email);
    await other.close();
  });

  it("one address guessing one email waits longer after each failure past five; others are untouched", async () => {
    const email = "first@example.com";
    for (let i = 0; i < 5; i++)
      expect(await verifyCredentials(t.db, { email, password: "nope" }, "10.3.0.1")).toBeNull();
    expect(await verifyCredentials(t.db, { email, password: "nope" }, "10.3.0.1")).toBeNull(); // the 6th: waits 2 s
    const refused = await verifyCredentials(t.db, { email, password: PW }, "10.3.0.1").catch((e) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect((refused as RateLimitedError).retryAfterSeconds).toBeGreaterThan(1);
    expect((await verifyCredentials(t.db, { email, password: PW }, "10.3.0.2"))?.email).toBe(email);
  });

  it("registration is limited per IP", async () => {
    for (let i = 0; i < 20; i++) {
      await expect(
        registerWithPassword(t.db, { email: "first@example.com", password: PW }, "10.9.9.9"),
      ).rejects.toBeInstanceOf(EmailTakenError);
    }
    await expect(
      registerWithPassword(t.db, { email: "fresh@example.com", password: PW }, "10.9.9.9"),
    ).rejects.toBeInstanceOf(RateLimitedError);
  });
});

describe.each(engines)("first-admin race on %s", (engine) => {
  it("exactly one of many simultaneous first sign-ups becomes admin", async () => {
    const t = await createTestDb(engine);
    try {
      const users = await Promise.all(
        Array.from({ length: 8 }, (_, i) => createUser(t.db, { email: `race${i}@example.com` })),
      );
      expect(users.filter((u) => u.role === "ADMIN")).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});
