"use server";
// The signed-in user changes their password (zod-checked; rate-limited like sign-in).
import { z } from "zod";
import { requireUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { toResult, type Result } from "@/lib/http/action";
import { changePassword, newPasswordSchema } from "@/lib/auth/password-change";

export async function changePasswordAction(
  input: z.input<ReturnType<typeof newPasswordSchema>>,
): Promise<Result<undefined>> {
  return toResult("changePasswordAction", async () => {
    const user = await requireUser({ temporaryPasswordAllowed: true });
    await changePassword(await getDb(), user.id, user.sid, input);
    return undefined;
  });
}
