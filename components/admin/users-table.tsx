"use client";
import Link from "next/link";
import { useState, useTransition } from "react";
import { toast } from "sonner";
import { changeRoleAction, setDisabledAction, type Done } from "@/app/(app)/admin/actions";
import type { Result } from "@/lib/http/action";
import { Button } from "@/components/ui/button";
import { count } from "@/lib/text/plural";
import { LocalDate } from "@/components/ui/local-date";

type Row = {
  id: string;
  email: string;
  name: string | null;
  role: "USER" | "ADMIN";
  disabled: boolean;
  createdAt: string;
  today: { messages: number; tokens: number };
};

export function UsersTable({ users, me }: { users: Row[]; me: string }) {
  const [pending, start] = useTransition();
  // A role change waits for a confirmation in the row: making someone admin gives them every user's audited reads.
  const [asked, setAsked] = useState<{ userId: string; role: Row["role"] } | null>(null);
  const run = (fn: () => Promise<Result<Done>>) =>
    start(async () => {
      const r = await fn();
      if (!r.ok) toast.error(r.error);
      else toast.success(r.data.message ?? "Updated.");
    });
  return (
    <div className="relative overflow-x-auto rounded-lg border border-border">
      <table className="stack-on-phone w-full text-sm">
        <thead className="bg-muted text-left text-xs uppercase text-muted-foreground">
          <tr>
            <th className="px-3 py-2 font-medium">User</th>
            <th className="px-3 py-2 font-medium">Role</th>
            <th className="px-3 py-2 font-medium">Status</th>
            <th className="px-3 py-2 font-medium">Joined</th>
            <th className="px-3 py-2 font-medium">Today</th>
            <th className="px-3 py-2 font-medium">
              <span className="sr-only">Review</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users.map((u) => (
            <tr key={u.id} className="border-t border-border" data-testid={`user-row-${u.email}`}>
              <td data-label="User" className="px-3 py-2">
                <div className="font-medium">{u.name || u.email}</div>
                {u.name && <div className="text-xs text-muted-foreground">{u.email}</div>}
              </td>
              <td data-label="Role" className="px-3 py-2">
                <label className="sr-only" htmlFor={`role-${u.id}`}>
                  Role of {u.email}
                </label>
                <select
                  id={`role-${u.id}`}
                  className="rounded-md border border-input bg-background px-2 py-1 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                  value={asked?.userId === u.id ? asked.role : u.role}
                  disabled={pending}
                  onChange={(e) => {
                    const role = e.target.value as Row["role"];
                    setAsked(role === u.role ? null : { userId: u.id, role });
                  }}
                >
                  <option value="USER">User</option>
                  <option value="ADMIN">Admin</option>
                </select>
                {asked?.userId === u.id && (
                  <div className="mt-1 grid max-w-64 gap-1 text-xs" role="group" aria-label="Confirm the role change">
                    <span>
                      {asked.role === "ADMIN"
                        ? "Make them an admin? They can change settings and review anyone's chats."
                        : "Make them a user? They lose the admin pages."}
                    </span>
                    <span className="flex gap-1">
                      <Button
                        size="sm"
                        disabled={pending}
                        onClick={() => {
                          setAsked(null);
                          run(() => changeRoleAction({ userId: u.id, role: asked.role }));
                        }}
                      >
                        Confirm
                      </Button>
                      <Button size="sm" variant="ghost" onClick={() => setAsked(null)}>
                        Cancel
                      </Button>
                    </span>
                  </div>
                )}
              </td>
              <td data-label="Status" className="px-3 py-2">
                {u.id === me ? (
                  <span className="text-muted-foreground">You</span>
                ) : (
                  <Button
                    size="sm"
                    variant={u.disabled ? "outline" : "secondary"}
                    disabled={pending}
                    onClick={() => run(() => setDisabledAction({ userId: u.id, disabled: !u.disabled }))}
                  >
                    {u.disabled ? "Disabled · Enable" : "Active · Disable"}
                  </Button>
                )}
              </td>
              <td data-label="Joined" className="px-3 py-2 text-muted-foreground">
                <LocalDate value={u.createdAt} />
              </td>
              <td data-label="Today" className="px-3 py-2 text-muted-foreground tabular-nums" data-testid="user-usage">
                {count(u.today.messages, "message")} · {count(u.today.tokens, "token")}
              </td>
              <td className="px-3 py-2">
                <Link
                  className="text-primary hover:underline"
                  href={`/admin/users/${u.id}`}
                  aria-label={`Review ${u.email}`}
                >
                  Review
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
