"use client";
// What a page shows when rendering it failed. Production hides every server
// error's message; an unreachable database is recognised by its digest
// (lib/db/prisma.ts), anything else by a reference the server log also prints.
import { useRouter } from "next/navigation";
import { useTransition } from "react";
import { Button } from "@/components/ui/button";
import { DATABASE_DOWN_DIGEST } from "@/lib/errors";

export default function PageError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const router = useRouter();
  const [pending, start] = useTransition();
  const databaseDown = error.digest === DATABASE_DOWN_DIGEST;
  return (
    <main
      className="flex min-h-dvh flex-col items-center justify-center gap-3 px-4 text-center"
      data-testid="page-error"
    >
      <h1 className="text-2xl font-semibold">
        {databaseDown ? "Mnemo can't reach its database" : "Something went wrong"}
      </h1>
      <p className="max-w-md text-muted-foreground">
        {databaseDown
          ? "Your conversations and memories are safe; Mnemo can't reach them right now. Try again in a moment."
          : `Mnemo could not show this page. If it keeps happening, quote reference ${error.digest ?? "unknown"} to your administrator.`}
      </p>
      <Button
        disabled={pending}
        onClick={() =>
          start(() => {
            router.refresh();
            reset();
          })
        }
      >
        {pending ? "Trying…" : "Try again"}
      </Button>
    </main>
  );
}
