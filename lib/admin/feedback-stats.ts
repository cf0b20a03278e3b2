// Content-free feedback counts for admins: 👍 and 👎 per model and week, over
// the last 12 weeks. No user, thread or text is read: only the rating, the
// answering model's name and the week. Ratings that came with imported
// conversations rate another app's answers, so they are not counted.
import type { Db } from "@/lib/db/client";

export type FeedbackWeek = { model: string; week: Date; up: number; down: number };

export async function feedbackByModel(db: Db, weeks = 12): Promise<FeedbackWeek[]> {
  return db.$queryRaw<FeedbackWeek[]>`
    SELECT COALESCE(i.model, 'unknown') AS model, date_trunc('week', f."createdAt") AS week,
            count(*) FILTER (WHERE f.rating = 1)::int AS up, count(*) FILTER (WHERE f.rating = -1)::int AS down
     FROM "Feedback" f JOIN "Item" i ON i.id = f."itemId" JOIN "Thread" t ON t.id = f."threadId"
     WHERE f.kind = 'rating' AND t."importSource" IS NULL AND f."createdAt" > now() - make_interval(weeks => ${weeks})
     GROUP BY 1, 2 ORDER BY 1, 2
  `;
}
