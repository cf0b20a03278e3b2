import type { Metadata } from "next";
import { requireAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { UsersTable } from "@/components/admin/users-table";

export const metadata: Metadata = { title: "Admin" };

export default async function AdminUsersPage() {
  const admin = await requireAdmin();
  const users = await (await getDb()).user.findMany({
    orderBy: { createdAt: "asc" },
    select: { id: true, email: true, name: true, role: true, disabled: true, createdAt: true },
    take: 500,
  });
  return (
    <section aria-labelledby="users-heading" className="grid gap-3">
      <h2 id="users-heading" className="text-lg font-medium">
        Users ({users.length})
      </h2>
      <UsersTable me={admin.id} users={users.map((u) => ({ ...u, createdAt: u.createdAt.toISOString() }))} />
    </section>
  );
}
