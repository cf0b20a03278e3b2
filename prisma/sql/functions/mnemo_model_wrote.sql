-- mnemo_model_wrote: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- Whether one of the user's answers or documents holds this word (as the index keeps it: a stem, or its keyed
-- token). A word the dictionary does not know but a model wrote is a word ("venmo", "iphone"), not a typo: its likely
-- corrections are not searched for it (mnemo_term_query). A word only the person typed may be their habit of a typo.
CREATE OR REPLACE FUNCTION mnemo_model_wrote(uid text, cfg regconfig, word text) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT EXISTS (SELECT 1 FROM "Item" i
                       WHERE i.search @@ mnemo_user_query(uid, cfg, word) AND i."userId" = uid AND i.role = 'assistant')
            OR EXISTS (SELECT 1 FROM "AttachmentPassage" p
                       WHERE p.search @@ mnemo_user_query(uid, cfg, word) AND p."userId" = uid) $$;
