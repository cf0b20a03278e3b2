// Who may create an account: MNEMO_REGISTRATION=open (anyone), invite (with an
// admin's invitation for that email) or closed (admins create accounts). The
// very first account can always be created: it becomes the admin who sets
// everything else up. Invitations are Auth.js verification tokens
// (identifier "invite:<email>", the token stored hashed), valid 7 days, used once.
import crypto from "node:crypto";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";
import { RegistrationClosedError } from "@/lib/errors";

export type RegistrationMode = "open" | "invite" | "closed";
export const INVITATION_DAYS = 7;

export const registrationMode = (): RegistrationMode => getConfig().registration;
const hash = (token: string) => crypto.createHash("sha256").update(token).digest("hex");
const identifier = (email: string) => `invite:${email.trim().toLowerCase()}`;

/** An invitation for `email`; returns the token to put in the link (shown once). */
export async function createInvitation(db: Db, email: string, now = new Date()): Promise<string> {
  const token = crypto.randomBytes(24).toString("base64url");
  await db.verificationToken.create({
    data: {
      identifier: identifier(email),
      token: hash(token),
      expires: new Date(now.getTime() + INVITATION_DAYS * 86_400_000),
    },
  });
  return token;
}

const CLOSED = "Registration is closed on this server. Ask an administrator for an account.";

/** The refusal of an account admitted only as the first one, when another was created first (a race). */
export const notFirstAnyMore = () => new RegistrationClosedError(CLOSED);

/**
 * Whether a new account for `email` may be created now; uses up the invitation when one is needed. Returns `asFirst`
 * when it is admitted only because there is no account yet (closed or invite mode): createUser checks that again
 * under its lock, so two sign-ups racing on an empty server do not both get in.
 */
export async function admitRegistration(
  db: Db,
  email: string,
  invite?: { token?: string; oauth?: boolean },
): Promise<{ asFirst: boolean }> {
  const mode = registrationMode();
  if (mode === "open") return { asFirst: false };
  if ((await db.user.count()) === 0) return { asFirst: true };
  if (mode === "closed") throw new RegistrationClosedError(CLOSED);
  // invite: a matching, unexpired invitation, deleted as it is used (an OAuth provider has checked the email itself).
  const where = {
    identifier: identifier(email),
    expires: { gt: new Date() },
    ...(invite?.oauth ? {} : { token: hash(invite?.token ?? "") }),
  };
  const found = await db.verificationToken.findFirst({ where });
  if (
    !found ||
    !(await db.verificationToken.deleteMany({ where: { identifier: found.identifier, token: found.token } })).count
  ) {
    throw new RegistrationClosedError(
      "Registration on this server is by invitation. Use the link from your invitation, with the email it was sent to.",
    );
  }
  return { asFirst: false };
}
