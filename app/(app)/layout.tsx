import { MessageSquarePlus } from "lucide-react";
import { AppShell } from "@/components/shell/app-shell";
import { AccountMenu } from "@/components/shell/account-menu";
import { buttonVariants } from "@/components/ui/button";
import { pageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { warmMessageVectors } from "@/lib/memory/warm-vectors";
import { ThreadList } from "@/components/chat/thread-list";
import { ProjectList } from "@/components/projects/project-list";

export default async function AppLayout({ children }: { children: React.ReactNode }) {
  // The shell only needs the session; each page checks the rest itself (the password page must render here).
  const user = await pageUser({ passwordPage: true });
  // Their message vectors read while the page loads, not when their first question waits for them.
  if (!user.mustChangePassword) warmMessageVectors(await getDb(), user.id);
  return (
    <AppShell
      sidebar={
        // While a temporary password is in use only the password page works: no lists that would each fail.
        user.mustChangePassword ? (
          <p className="px-2 py-3 text-sm text-muted-foreground" data-testid="password-first">
            Choose your own password to start: your chats and projects appear here once you have.
          </p>
        ) : (
          <div className="grid grid-cols-[minmax(0,1fr)] gap-2 py-2">
            {/* A full page load: a fresh chat even when the URL was just rewritten from "/". */}
            {/* eslint-disable-next-line @next/next/no-html-link-for-pages -- a full load on purpose (above) */}
            <a href="/" className={buttonVariants({ variant: "outline", className: "justify-start" })}>
              <MessageSquarePlus className="h-4 w-4" aria-hidden /> New chat
            </a>
            <ProjectList />
            <ThreadList />
          </div>
        )
      }
      footer={<AccountMenu email={user.email ?? ""} name={user.name} role={user.role} />}
    >
      {children}
    </AppShell>
  );
}
