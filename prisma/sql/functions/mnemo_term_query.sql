-- mnemo_term_query: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A recall search term's query: its alternatives (separated by U+001F, lib/memory/related-words.ts, or by U+001E,
-- a word's other forms, lib/memory/word-forms.ts), each every one of its words (mnemo_user_query), any of them
-- matching. A term without alternatives is mnemo_user_query's.
CREATE OR REPLACE FUNCTION mnemo_term_query(uid text, cfg regconfig, term text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT COALESCE(string_agg('(' || q::text || ')', ' | '), '')::tsquery
        FROM regexp_split_to_table(term, E'[\x1E\x1F]') AS a, mnemo_user_query(uid, cfg, a) AS q WHERE numnode(q) > 0 $$;
