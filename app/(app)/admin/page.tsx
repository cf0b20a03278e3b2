import type { Metadata } from "next";
import { usageTodayByUser } from "@/lib/account/usage-limits";
import { registrationMode } from "@/lib/auth/registration";
import { AddPeople } from "@/components/admin/add-people";
import { pageAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { UsersTable } from "@/components/admin/users-table";
import { JobHealth } from "@/components/admin/job-health";
import { queueHealth } from "@/lib/jobs/queue";
import { cutGraphemes } from "@/lib/text/policy";
import { resolveEmbedder } from "@/lib/llm/embeddings";
import { countPending } from "@/lib/memory/embed";
import { feedbackByModel } from "@/lib/admin/feedback-stats";
import { FeedbackStats } from "@/components/admin/feedback-stats";
import { count } from "@/lib/text/plural";

export const metadata: Metadata = { title: "Admin" };
export const dynamic = "force-dynamic";

export default async function AdminUsersPage({ searchParams }: { searchParams: Promise<{ q?: string }> }) {
  const admin = await pageAdmin();
  const q = cutGraphemes(((await searchParams).q ?? "").trim(), 200);
  const db = await getDb();
  const health = await queueHealth(db);
  const embedder = await resolveEmbedder(db).catch(() => null);
  const waiting = embedder ? await countPending(db, embedder) : 0;
  const ratings = await feedbackByModel(db);
  const users = await db.user.findMany({
    // People only: a shared project's own account is not someone (lib/projects/access.ts).
    where: {
      kind: "person",
      ...(q ? { OR: [{ email: { contains: q.toLowerCase() } }, { name: { contains: q, mode: "insensitive" } }] } : {}),
    },
    orderBy: { createdAt: "asc" },
    select: { id: true, email: true, name: true, role: true, disabled: true, createdAt: true },
    take: 500,
  });
  const usage = await usageTodayByUser(
    db,
    users.map((u) => u.id),
  );
  return (
    <section aria-labelledby="users-heading" className="grid gap-3">
      <div className="flex flex-wrap items-center justify-between gap-3">
        <h2 id="users-heading" className="text-lg font-medium">
          Users ({users.length}
          {q ? ` matching “${q}”` : ""})
        </h2>
        <form role="search" className="flex gap-2" action="/admin">
          <label htmlFor="user-search" className="sr-only">
            Search users by email or name
          </label>
          <input
            id="user-search"
            name="q"
            defaultValue={q}
            placeholder="Search email or name"
            className="h-9 rounded-md border border-input bg-background px-3 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          />
          <button type="submit" className="h-9 rounded-md border border-input px-3 text-sm hover:bg-accent">
            Search
          </button>
        </form>
      </div>
      <AddPeople mode={registrationMode()} />
      <UsersTable
        me={admin.id}
        users={users.map((u) => ({
          ...u,
          createdAt: u.createdAt.toISOString(),
          today: usage.get(u.id) ?? { messages: 0, tokens: 0 },
        }))}
      />
      <div className="mt-6">
        <JobHealth health={health} />
        <p className="mt-2 text-sm text-muted-foreground" data-testid="embedding-backlog">
          {embedder
            ? waiting
              ? `${count(waiting, "memory or message", "memories and messages")} ${waiting === 1 ? "is" : "are"} waiting for a vector from ${embedder.model} (the embed jobs above, or npm run memory:embed).`
              : `Every memory and message has its vector from ${embedder.model}.`
            : "Recall by meaning is off: no embedding model is set (Model settings). Recall matches words only."}
        </p>
      </div>
      <div className="mt-6">
        <FeedbackStats rows={ratings} />
      </div>
    </section>
  );
}
