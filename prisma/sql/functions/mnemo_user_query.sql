-- mnemo_user_query: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A query for every word of `body` (AND), keyed by user; empty when no word is searchable.
CREATE OR REPLACE FUNCTION mnemo_user_query(uid text, cfg regconfig, body text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT COALESCE(string_agg('''' || replace(replace(mnemo_user_tag(uid) || l, '\', '\\'), '''', '''''') || '''', ' & '), '')::tsquery
        FROM unnest(tsvector_to_array(to_tsvector(cfg, body))) AS l $$;
