-- mnemo_user_tsvector: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A document's lexemes, keyed by user (positions are not kept: ranking uses none).
CREATE OR REPLACE FUNCTION mnemo_user_tsvector(uid text, doc tsvector) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_tsvector(ARRAY(SELECT mnemo_user_tag(uid) || l FROM unnest(tsvector_to_array(doc)) AS l)) $$;
