-- CreateTable
CREATE TABLE "ModelServerNote" (
    "server" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "tokens" INTEGER,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelServerNote_pkey" PRIMARY KEY ("server","kind")
);

