// Registration modes: open lets anyone in; invite needs an unexpired invitation
// for that email, used once; closed lets no one in but the very first account.
import { RegistrationClosedError } from "@/lib/errors";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, engines, type TestDb } from "@/testing/databases";
import { getConfig } from "@/lib/config";
import { registerWithPassword } from "@/lib/auth/users";
import { admitRegistration, createInvitation } from "@/lib/auth/registration";

const setMode = (m: "open" | "invite" | "closed") => ((getConfig() as { registration: string }).registration = m);
afterEach(() => setMode("open"));

describe.each(engines)("registration modes on %s", (engine) => {
  let t: TestDb;
  let n = 0;
  beforeAll(async () => {
    t = await createTestDb(engine);
  });
  afterAll(async () => t?.close());
  const ip = () => `198.51.100.${n++ % 250}`;
  const input = (email: string) => ({ email, password: "a long enough password" });

  it("closed: only the very first account; then a clear refusal", async () => {
    setMode("closed");
    const first = await registerWithPassword(t.db, input(`first-${engine}@example.com`), ip());
    expect(first.role).toBe("ADMIN");
    await expect(registerWithPassword(t.db, input(`second-${engine}@example.com`), ip())).rejects.toThrow(
      /Registration is closed/,
    );
    expect(await t.db.user.count({ where: { email: `second-${engine}@example.com` } })).toBe(0);
  });

  it("closed: sign-ups racing on an empty server get one account, the admin; the others are refused", async () => {
    setMode("closed");
    const fresh = await createTestDb(engine);
    try {
      const tries = await Promise.allSettled(
        [1, 2, 3, 4, 5].map((i) => registerWithPassword(fresh.db, input(`race-${i}-${engine}@example.com`), ip())),
      );
      expect(tries.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      for (const r of tries.filter((r) => r.status === "rejected"))
        expect((r as PromiseRejectedResult).reason).toBeInstanceOf(RegistrationClosedError);
      expect(await fresh.db.user.findMany({ select: { role: true } })).toEqual([{ role: "ADMIN" }]);
    } finally {
      await fresh.close();
    }
  });

  it("invite: the invitation's token and email, once, before it expires", async () => {
    setMode("invite");
    const email = `invited-${engine}@example.com`;
    await expect(registerWithPassword(t.db, input(email), ip())).rejects.toBeInstanceOf(RegistrationClosedError);
    const token = await createInvitation(t.db, email);
    await expect(
      registerWithPassword(t.db, input(`someone-else-${engine}@example.com`), ip(), token),
    ).rejects.toBeInstanceOf(RegistrationClosedError);
    await expect(registerWithPassword(t.db, input(email), ip(), "not-the-token")).rejects.toBeInstanceOf(
      RegistrationClosedError,
    );
    expect((await registerWithPassword(t.db, input(email), ip(), token)).email).toBe(email);
    // Used up: a second account from the same invitation is refused.
    await expect(admitRegistration(t.db, email, { token })).rejects.toBeInstanceOf(RegistrationClosedError);
    const old = await createInvitation(t.db, `late-${engine}@example.com`, new Date(Date.now() - 8 * 86_400_000));
    await expect(registerWithPassword(t.db, input(`late-${engine}@example.com`), ip(), old)).rejects.toThrow(
      /by invitation/,
    );
    // An OAuth sign-up needs an invitation for its (provider-checked) email, not the token.
    await createInvitation(t.db, `oauth-${engine}@example.com`);
    await expect(admitRegistration(t.db, `oauth-${engine}@example.com`, { oauth: true })).resolves.toEqual({
      asFirst: false,
    });
    await expect(admitRegistration(t.db, `stranger-${engine}@example.com`, { oauth: true })).rejects.toBeInstanceOf(
      RegistrationClosedError,
    );
  });

  it("open: anyone", async () => {
    expect((await registerWithPassword(t.db, input(`open-${engine}@example.com`), ip())).email).toBe(
      `open-${engine}@example.com`,
    );
  });
});
