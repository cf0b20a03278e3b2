"use server";
// The signed-in user changes their password (validated; rate-limited like sign-in). A user who must replace a
// temporary password reaches it too.
import { z } from "zod";
import { userAction } from "@/lib/http/action";
import { changePassword, newPasswordSchema } from "@/lib/auth/password-change";

export const changePasswordAction = userAction(
  // Lazy: the schema reads the configured minimum length.
  z.tuple([z.lazy(newPasswordSchema)]),
  async ([input], { db, user }) => void (await changePassword(db, user.id, user.sid, input)),
  { name: "changePasswordAction", temporaryPasswordAllowed: true },
);
