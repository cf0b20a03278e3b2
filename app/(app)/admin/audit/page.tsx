import type { Metadata } from "next";
import { pageAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { AUDIT_ACTIONS, auditFilterSchema, listAudit } from "@/lib/admin/review";

export const metadata: Metadata = { title: "Audit log" };
export const dynamic = "force-dynamic";

const field =
  "h-9 rounded-md border border-input bg-background px-2 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring";

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  await pageAdmin();
  const raw = await searchParams;
  const parsed = auditFilterSchema.safeParse(Object.fromEntries(Object.entries(raw).filter(([, v]) => v)));
  const filters = parsed.success ? parsed.data : {};
  const rows = await listAudit(await getDb(), filters);
  return (
    <section aria-labelledby="audit-heading" className="grid gap-3">
      <h2 id="audit-heading" className="text-lg font-medium">
        Audit log
      </h2>
      <p className="text-sm text-muted-foreground">
        Every administrative access and change, newest first (200 at most). Entries are append-only: neither the app nor
        the database lets anyone edit or delete them.
      </p>
      {!parsed.success && (
        <p className="text-sm text-destructive" role="alert">
          Some filters were not valid and were ignored.
        </p>
      )}
      <form className="flex flex-wrap items-end gap-2 text-sm" action="/admin/audit">
        <label className="grid gap-1">
          Action
          <select name="action" defaultValue={filters.action ?? ""} className={field}>
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label className="grid gap-1">
          Admin email
          <input name="actor" defaultValue={filters.actor ?? ""} className={field} />
        </label>
        <label className="grid gap-1">
          User email
          <input name="subject" defaultValue={filters.subject ?? ""} className={field} />
        </label>
        <label className="grid gap-1">
          From
          <input type="date" name="from" defaultValue={filters.from ?? ""} className={field} />
        </label>
        <label className="grid gap-1">
          To
          <input type="date" name="to" defaultValue={filters.to ?? ""} className={field} />
        </label>
        <button type="submit" className="h-9 rounded-md border border-input px-3 hover:bg-accent">
          Filter
        </button>
      </form>
      {rows.length === 0 ? (
        <p className="text-sm text-muted-foreground">
          No entries{Object.keys(filters).length ? " match these filters" : " yet"}.
        </p>
      ) : (
        <div className="relative overflow-x-auto rounded-lg border border-border">
          <table className="stack-on-phone w-full text-sm" data-testid="audit-table">
            <thead className="bg-muted text-left text-xs uppercase text-muted-foreground">
              <tr>
                <th className="px-3 py-2 font-medium">When (UTC)</th>
                <th className="px-3 py-2 font-medium">Admin</th>
                <th className="px-3 py-2 font-medium">Action</th>
                <th className="px-3 py-2 font-medium">User</th>
                <th className="px-3 py-2 font-medium">Reason</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id} className="border-t border-border align-top">
                  <td data-label="When (UTC)" className="whitespace-nowrap px-3 py-2">
                    {r.at.replace("T", " ").slice(0, 19)}
                  </td>
                  <td data-label="Admin" className="px-3 py-2">
                    {r.actor}
                  </td>
                  <td data-label="Action" className="px-3 py-2 font-mono text-xs">
                    {r.action}
                    {r.threadId ? <div className="text-muted-foreground">thread {r.threadId}</div> : null}
                  </td>
                  <td data-label="User" className="px-3 py-2">
                    {r.subject}
                  </td>
                  <td data-label="Reason" className="px-3 py-2">
                    {r.reason ?? "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
