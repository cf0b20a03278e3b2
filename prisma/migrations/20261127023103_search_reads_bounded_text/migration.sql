-- Hand-written: a message's search entry reads at most its first 150,000 characters, or (encrypted at rest) its
-- first 20,000 search tokens of 18 characters. PostgreSQL refuses a tsvector over 1 MB, and about 500,000 characters
-- of varied words pass it: storing such a message (a model's long answer, a long message typed where the admin
-- allowed it) failed, and the answer with it. Within these bounds the user-keyed entry stays under about 700 KB
-- whatever the text; the message itself is stored whole, only words past that point are not found by search.
DROP INDEX "Item_search_idx";
ALTER TABLE "Item" DROP COLUMN "search";
ALTER TABLE "Item" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  mnemo_user_tsvector("userId",
    CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', left("content", 150000))
         ELSE to_tsvector('simple', left("searchTokens", 360000)) END)
  || array_to_tsvector(ARRAY[mnemo_thread_tag("threadId")])
) STORED;
CREATE INDEX "Item_search_idx" ON "Item" USING GIN ("search");
