-- Documents searchable with the thread: each passage of an attached document is a row the sidebar's message search
-- reads beside messages. Attachments stored before this are indexed by the sweeper (passagesIndexed false).
-- AlterTable
ALTER TABLE "Attachment" ADD COLUMN     "passagesIndexed" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "AttachmentPassage" (
    "id" TEXT NOT NULL,
    "attachmentId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "page" INTEGER,
    "content" TEXT NOT NULL,
    "searchTokens" TEXT,
    -- Hand-written: generated like a message's (migration search_reads_bounded_text), so the message search's
    -- user-keyed queries (mnemo_term_query) find a document's words as they find a message's.
    "search" tsvector GENERATED ALWAYS AS (
      mnemo_user_tsvector("userId",
        CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', left("content", 150000))
             ELSE to_tsvector('simple', left("searchTokens", 360000)) END)
    ) STORED,

    CONSTRAINT "AttachmentPassage_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AttachmentPassage_search_idx" ON "AttachmentPassage" USING GIN ("search");

-- CreateIndex
CREATE UNIQUE INDEX "AttachmentPassage_attachmentId_position_key" ON "AttachmentPassage"("attachmentId", "position");

-- AddForeignKey
ALTER TABLE "AttachmentPassage" ADD CONSTRAINT "AttachmentPassage_attachmentId_fkey" FOREIGN KEY ("attachmentId") REFERENCES "Attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- The sweeper looks for documents not yet indexed (a few rows) without reading the table.
CREATE INDEX "Attachment_passagesIndexed_idx" ON "Attachment"("passagesIndexed");
