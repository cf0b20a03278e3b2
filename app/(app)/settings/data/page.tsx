import type { Metadata } from "next";
import Link from "next/link";
import { pageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { auditAboutUser } from "@/lib/admin/review";
import { CONFIRM_PHRASE, accountSuccession } from "@/lib/account/delete";
import { retentionSettings } from "@/lib/account/retention";
import { encryptionEnabled } from "@/lib/crypto/content";
import { ExportData } from "@/components/account/export-data";
import { MemoryTransfer } from "@/components/account/memory-transfer";
import { DeleteAccount } from "@/components/account/delete-account";
import { ConversationImport } from "@/components/account/conversation-import";
import { MemoryListPaste } from "@/components/account/memory-list-paste";
import { learnPlan } from "@/lib/import/learn";
import { userContext } from "@/lib/user-context";
import { whereMemoriesWent } from "@/lib/memory/disclosure";
import { MemoryTrail } from "@/components/account/memory-trail";
import { LocalDate } from "@/components/ui/local-date";

export const metadata: Metadata = { title: "Your data" };
export const dynamic = "force-dynamic";

const ACTIONS: Record<string, string> = {
  "thread.view": "viewed a conversation of yours",
  "attachment.view": "opened a file you attached",
  "memory.view": "viewed your memories",
  "user.role": "changed your role",
  "user.disable": "disabled your account",
  "user.limits": "changed your daily limits",
  "user.password": "set a temporary password for you",
  "user.create": "created your account",
  "user.enable": "enabled your account",
  "apikey.create": "made an API key",
  "apikey.revoke": "revoked an API key",
};

function Section({
  id,
  title,
  children,
  description,
}: {
  id: string;
  title: string;
  description: string;
  children: React.ReactNode;
}) {
  return (
    <section aria-labelledby={id} className="grid gap-3 rounded-lg border border-border p-4">
      <div>
        <h2 id={id} className="text-lg font-medium">
          {title}
        </h2>
        <p className="text-sm text-muted-foreground">{description}</p>
      </div>
      {children}
    </section>
  );
}

export default async function DataPage() {
  const session = await pageUser();
  const db = await getDb();
  const [user, audits, plan, trail, succession] = await Promise.all([
    db.user.findUniqueOrThrow({ where: { id: session.id }, select: { passwordHash: true } }),
    auditAboutUser(db, session.id),
    learnPlan(db, session.id),
    userContext(db, session.id).then((u) => whereMemoriesWent(u, 7)),
    accountSuccession(db, session.id),
  ]);
  const retention = retentionSettings();
  return (
    <div className="mx-auto grid max-w-3xl gap-6 px-4 py-10">
      <div>
        <p className="text-sm">
          <Link className="text-primary hover:underline" href="/settings">
            Settings
          </Link>{" "}
          / Your data
        </p>
        <h1 className="text-2xl font-semibold">Your data</h1>
        <p className="text-sm text-muted-foreground">
          {encryptionEnabled() ? "Your messages and memories are encrypted at rest with a key of your own. " : ""}
          {retention.messageDays > 0
            ? `Messages are kept for ${retention.messageDays} days. `
            : "Messages are kept until you delete them. "}
          Temporary chats end after {retention.temporaryChatHours} hours.
        </p>
      </div>

      <Section
        id="export-heading"
        title="Export"
        description="Everything Mnemo holds about you, as one JSON file: profile, settings, every conversation with all its branches, summaries, memories with their history, usage and the administrator access records below."
      >
        <ExportData />
      </Section>

      <Section
        id="import-heading"
        title="Import conversations"
        description="Bring your history from ChatGPT, Claude, Open WebUI, LibreChat or another Mnemo. Conversations keep their dates and edited branches; importing the same file again adds nothing."
      >
        <ConversationImport initialPlan={plan} />
      </Section>

      <Section
        id="memories-heading"
        title="Memories"
        description="Your memories on their own. A JSON file can be imported here or into another Mnemo; memories you already have are skipped."
      >
        <MemoryTransfer />
        <MemoryListPaste />
      </Section>

      <Section
        id="trail-heading"
        title="Where did my memories go?"
        description="Every request that carried your memories to a model in the last 7 days: which model, at which server, through which client (this app, or which API key). A memory marked private is only ever sent to a model server on this machine."
      >
        <MemoryTrail trail={trail} />
      </Section>

      <Section
        id="audit-heading"
        title="Access record"
        description="Every time an administrator opened your conversations or memories or changed your account, and every API key you made or revoked, is recorded here. Records cannot be changed or deleted."
      >
        {audits.length === 0 ? (
          <p className="text-sm text-muted-foreground" data-testid="audit-empty">
            No administrator has accessed your data.
          </p>
        ) : (
          <ul className="grid gap-2 text-sm" data-testid="audit-list">
            {audits.map((a) => (
              <li key={a.id} className="rounded-md bg-muted/50 px-3 py-2">
                {a.action.startsWith("apikey.") ? "You" : `An administrator (${a.actor})`}{" "}
                {ACTIONS[a.action] ?? a.action}
                {a.threadId ? (
                  <>
                    {" "}
                    (
                    <Link className="text-primary hover:underline" href={`/c/${a.threadId}`}>
                      open it
                    </Link>
                    )
                  </>
                ) : null}{" "}
                on <LocalDate value={a.at} time />
                {a.reason ? <> because “{a.reason}”</> : null}.
              </li>
            ))}
          </ul>
        )}
      </Section>

      <Section
        id="delete-heading"
        title="Delete your account"
        description="Deletes your account and everything in it, at once and for good: conversations, memories, settings and keys. You will be signed out."
      >
        <DeleteAccount hasPassword={!!user.passwordHash} phrase={CONFIRM_PHRASE} succession={succession} />
      </Section>
    </div>
  );
}
