import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { pageAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { adminAccessEnabled, userThreadsForAdmin } from "@/lib/admin/review";
import { UserReview } from "@/components/admin/user-review";
import { UsageLimitsForm } from "@/components/admin/usage-limits-form";
import { TemporaryPassword } from "@/components/admin/temporary-password";
import { usageTodayByUser } from "@/lib/account/usage-limits";
import { getConfig } from "@/lib/config";
import { count } from "@/lib/text/plural";
import { LocalDate } from "@/components/ui/local-date";

export const metadata: Metadata = { title: "Review user" };
export const dynamic = "force-dynamic";

export default async function AdminUserPage({ params }: { params: Promise<{ id: string }> }) {
  const admin = await pageAdmin();
  const { id } = await params;
  const db = await getDb();
  const user = await db.user.findUnique({
    where: { id: id.slice(0, 64) },
    select: {
      id: true,
      email: true,
      name: true,
      role: true,
      disabled: true,
      createdAt: true,
      dailyMessageLimit: true,
      dailyTokenLimit: true,
      _count: { select: { memories: true } },
    },
  });
  if (!user) notFound();
  const [threads, usage] = await Promise.all([userThreadsForAdmin(db, user.id), usageTodayByUser(db, [user.id])]);
  const defaults = getConfig().limits;
  return (
    <section aria-labelledby="user-heading" className="grid gap-4">
      <p className="text-sm">
        <Link className="text-primary hover:underline" href="/admin">
          Users
        </Link>{" "}
        / {user.email}
      </p>
      <div>
        <h2 id="user-heading" className="text-lg font-medium">
          {user.name || user.email}
        </h2>
        <p className="text-sm text-muted-foreground">
          {user.email} · {user.role === "ADMIN" ? "Admin" : "User"} · {user.disabled ? "disabled" : "active"} · joined{" "}
          <LocalDate value={user.createdAt} /> · {count(threads.length, "conversation")},{" "}
          {count(user._count.memories, "memory", "memories")}
        </p>
      </div>
      <UsageLimitsForm
        userId={user.id}
        current={{ messages: user.dailyMessageLimit, tokens: user.dailyTokenLimit }}
        defaults={{ messages: defaults.dailyMessages, tokens: defaults.dailyTokens }}
        today={usage.get(user.id) ?? { messages: 0, tokens: 0 }}
      />
      <TemporaryPassword userId={user.id} email={user.email} />
      <UserReview
        user={{ id: user.id, email: user.email }}
        isSelf={user.id === admin.id}
        threads={threads}
        accessEnabled={adminAccessEnabled()}
      />
    </section>
  );
}
