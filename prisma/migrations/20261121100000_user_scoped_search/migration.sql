-- AlterTable
ALTER TABLE "Item" ADD COLUMN     "userId" TEXT;


-- Hand-written: full-text entries keyed by user. Each lexeme in the generated
-- search columns is prefixed with a tag of its owner's id, so the GIN index
-- keeps one posting list per (user, word): a lookup reads only that user's
-- messages or memories, however many other users share the database.
UPDATE "Item" i SET "userId" = t."userId" FROM "Thread" t WHERE t.id = i."threadId";

CREATE FUNCTION mnemo_user_tag(uid text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT substr(md5(COALESCE(uid, '')), 1, 12) || ':' $$;

-- A document's lexemes, keyed by user (positions are not kept: ranking uses none).
CREATE FUNCTION mnemo_user_tsvector(uid text, doc tsvector) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_tsvector(ARRAY(SELECT mnemo_user_tag(uid) || l FROM unnest(tsvector_to_array(doc)) AS l)) $$;

-- A query for every word of `body` (AND), keyed by user; empty when no word is searchable.
CREATE FUNCTION mnemo_user_query(uid text, cfg regconfig, body text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT COALESCE(string_agg('''' || replace(replace(mnemo_user_tag(uid) || l, '\', '\\'), '''', '''''') || '''', ' & '), '')::tsquery
        FROM unnest(tsvector_to_array(to_tsvector(cfg, body))) AS l $$;

DROP INDEX "Item_search_idx";
ALTER TABLE "Item" DROP COLUMN "search";
ALTER TABLE "Item" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  mnemo_user_tsvector("userId",
    CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', "content") ELSE to_tsvector('simple', "searchTokens") END)
) STORED;
CREATE INDEX "Item_search_idx" ON "Item" USING GIN ("search");

DROP INDEX "Memory_search_idx";
ALTER TABLE "Memory" DROP COLUMN "search";
ALTER TABLE "Memory" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (
  mnemo_user_tsvector("userId",
    CASE WHEN "searchTokens" IS NULL THEN to_tsvector('english', "text") ELSE to_tsvector('simple', "searchTokens") END)
) STORED;
CREATE INDEX "Memory_search_idx" ON "Memory" USING GIN ("search");
