-- AlterTable
ALTER TABLE "Thread" ADD COLUMN     "recallFrom" TIMESTAMP(3);


-- Threads of users who already said "forget me" keep the cut-off they had (it was the user's).
UPDATE "Thread" t SET "recallFrom" = u."memoryResetAt" FROM "User" u
 WHERE u.id = t."userId" AND u."memoryResetAt" IS NOT NULL;
