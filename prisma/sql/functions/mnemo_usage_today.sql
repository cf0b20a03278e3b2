-- mnemo_usage_today: its current source. Change it here, then `npm run db:functions -- <migration_name>` writes the
-- migration that brings databases to it (tests/sql-functions.test.ts fails while the two disagree).
-- The chat turn's usage-limit check as a set-returning function, so it travels in the turn's one batched read
-- (lib/db/function-calls.ts) instead of a round trip of its own. With p_any, it also says whether any user has
-- limits of their own (the app caches that for a minute).
CREATE OR REPLACE FUNCTION mnemo_usage_today(p_user text, p_day date, p_any boolean)
RETURNS TABLE (messages integer, tokens integer, "msgLimit" integer, "tokLimit" integer, "anyLimits" boolean)
LANGUAGE sql STABLE AS $$
  SELECT COALESCE(d.turns, 0), COALESCE(d.tokens, 0), u."dailyMessageLimit", u."dailyTokenLimit",
         CASE WHEN p_any THEN EXISTS (
           SELECT 1 FROM "User" x WHERE x."dailyMessageLimit" > 0 OR x."dailyTokenLimit" > 0
         ) END
  FROM "User" u LEFT JOIN "UsageDay" d ON d."userId" = u.id AND d.day = p_day
  WHERE u.id = p_user
$$;
