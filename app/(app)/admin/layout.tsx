import Link from "next/link";
import { notFound } from "next/navigation";
import { pageUser } from "@/lib/auth/session";

export default async function AdminLayout({ children }: { children: React.ReactNode }) {
  const user = await pageUser();
  // Non-admins get the same "not found" as a page that does not exist.
  if (user.role !== "ADMIN") notFound();
  return (
    <div className="mx-auto max-w-5xl px-4 py-8 md:px-8 lg:px-12">
      <div className="mb-6 flex flex-wrap items-baseline gap-4">
        <h1 className="text-2xl font-semibold">Admin</h1>
        <nav className="flex gap-3 text-sm" aria-label="Admin sections">
          <Link className="text-primary hover:underline" href="/admin">
            Users
          </Link>
          <Link className="text-primary hover:underline" href="/admin/audit">
            Audit log
          </Link>
          <Link className="text-primary hover:underline" href="/admin/settings">
            Model settings
          </Link>
        </nav>
      </div>
      {children}
    </div>
  );
}
