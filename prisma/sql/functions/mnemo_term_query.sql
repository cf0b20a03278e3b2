-- mnemo_term_query: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- A recall search term's query: its alternatives (separated by U+001F, lib/memory/related-words.ts, or by U+001E,
-- a word's other forms, lib/memory/word-forms.ts), each every one of its words (mnemo_user_query), any of them
-- matching. A term without alternatives is mnemo_user_query's. Built in one statement (mnemo_user_query's body per
-- alternative, grouped): a question's related words make hundreds of alternatives, and a function call for each cost
-- a recall several milliseconds. A misspelled word's likely corrections follow U+001D (lib/memory/spelling.ts): they
-- are alternatives too, unless a model wrote the word as typed (mnemo_model_wrote), which makes it a word.
CREATE OR REPLACE FUNCTION mnemo_term_query(uid text, cfg regconfig, term text) RETURNS tsquery
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT COALESCE(string_agg('(' || q || ')', ' | '), '')::tsquery
        FROM (SELECT string_agg('''' || replace(replace(tag || l, '\', '\\'), '''', '''''') || '''', ' & ') AS q
              FROM (SELECT mnemo_user_tag(uid) AS tag) t,
                   (SELECT CASE WHEN strpos(term, E'\x1D') = 0 THEN term
                                WHEN mnemo_model_wrote(uid, cfg, (regexp_split_to_array(term, E'[\x1D\x1E\x1F]'))[1])
                                THEN split_part(term, E'\x1D', 1)
                                ELSE term END AS kept) k,
                   regexp_split_to_table(k.kept, E'[\x1D\x1E\x1F]') WITH ORDINALITY AS a(alt, i),
                   unnest(tsvector_to_array(to_tsvector(cfg, alt))) AS l
              GROUP BY i) s $$;
