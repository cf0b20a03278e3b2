-- CreateTable
CREATE TABLE "SignedOutSession" (
    "sid" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SignedOutSession_pkey" PRIMARY KEY ("sid")
);

-- CreateIndex
CREATE INDEX "SignedOutSession_userId_idx" ON "SignedOutSession"("userId");

-- CreateIndex
CREATE INDEX "SignedOutSession_expiresAt_idx" ON "SignedOutSession"("expiresAt");

-- AddForeignKey
ALTER TABLE "SignedOutSession" ADD CONSTRAINT "SignedOutSession_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

