// How large a file may be and how much one person may keep: set by an admin on Admin → Model settings, else the
// environment (MNEMO_ATTACHMENT_MAX_MB, MNEMO_ATTACHMENT_USER_MB). Read on every upload (one small row), so a
// change applies at once on every instance.
import { z } from "zod";
import type { Db } from "@/lib/db/client";
import { getConfig } from "@/lib/config";

const SETTING_KEY = "attachment-limits";
const MB = 1024 * 1024;

export const attachmentLimitsSchema = z.object({
  /** Megabytes; null: the environment's. */
  fileMb: z.number().int("A whole number of megabytes.").min(1).max(1024, "At most 1,024 MB a file.").nullable(),
  userMb: z.number().int("A whole number of megabytes.").min(1).max(1_048_576).nullable(),
});
export type AttachmentLimitsInput = z.input<typeof attachmentLimitsSchema>;

export type AttachmentLimits = { maxFileBytes: number; maxUserBytes: number; saved: AttachmentLimitsInput };

export async function attachmentLimits(db: Db): Promise<AttachmentLimits> {
  const row = await db.appSetting.findUnique({ where: { key: SETTING_KEY } });
  const saved = attachmentLimitsSchema.safeParse(row?.value).data ?? { fileMb: null, userMb: null };
  const env = getConfig().attachments;
  return {
    maxFileBytes: saved.fileMb ? saved.fileMb * MB : env.maxFileBytes,
    maxUserBytes: saved.userMb ? saved.userMb * MB : env.maxUserBytes,
    saved,
  };
}

export async function saveAttachmentLimits(db: Db, input: AttachmentLimitsInput, adminId: string) {
  const value = attachmentLimitsSchema.parse(input);
  await db.appSetting.upsert({
    where: { key: SETTING_KEY },
    create: { key: SETTING_KEY, value, updatedBy: adminId },
    update: { value, updatedBy: adminId },
  });
}
