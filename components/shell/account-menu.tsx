"use client";
import Link from "next/link";
import { DropdownMenu } from "radix-ui";
import { Brain, LogOut, Settings, Shield, ChevronsUpDown } from "lucide-react";
import { signOutAction } from "@/app/(auth)/actions";

const item =
  "flex cursor-pointer select-none items-center gap-2 rounded-sm px-2 py-1.5 text-sm outline-none data-[highlighted]:bg-accent data-[highlighted]:text-accent-foreground";

export function AccountMenu({ email, name, role }: { email: string; name?: string | null; role: "USER" | "ADMIN" }) {
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger
        className="flex w-full items-center gap-2 rounded-md px-2 py-2 text-left text-sm hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        aria-label="Account menu"
      >
        <span
          className="flex h-7 w-7 shrink-0 items-center justify-center rounded-full bg-primary text-xs font-semibold text-primary-foreground"
          aria-hidden
        >
          {(name || email).slice(0, 1).toUpperCase()}
        </span>
        <span className="min-w-0 flex-1">
          <span className="block truncate font-medium">{name || email}</span>
          {name && <span className="block truncate text-xs text-muted-foreground">{email}</span>}
        </span>
        <ChevronsUpDown className="h-4 w-4 text-muted-foreground" aria-hidden />
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content
          side="top"
          align="start"
          sideOffset={6}
          className="z-50 min-w-56 rounded-md border border-border bg-card p-1 text-foreground shadow-md"
        >
          <DropdownMenu.Label className="px-2 py-1.5 text-xs text-muted-foreground">
            Signed in as {email}
            {role === "ADMIN" && " · admin"}
          </DropdownMenu.Label>
          <DropdownMenu.Separator className="my-1 h-px bg-border" />
          <DropdownMenu.Item asChild className={item}>
            <Link href="/settings">
              <Settings className="h-4 w-4" aria-hidden /> Settings
            </Link>
          </DropdownMenu.Item>
          <DropdownMenu.Item asChild className={item}>
            <Link href="/settings/memory">
              <Brain className="h-4 w-4" aria-hidden /> Memory
            </Link>
          </DropdownMenu.Item>
          {role === "ADMIN" && (
            <DropdownMenu.Item asChild className={item}>
              <Link href="/admin">
                <Shield className="h-4 w-4" aria-hidden /> Admin
              </Link>
            </DropdownMenu.Item>
          )}
          <DropdownMenu.Separator className="my-1 h-px bg-border" />
          <DropdownMenu.Item className={item} onSelect={() => void signOutAction()}>
            <LogOut className="h-4 w-4" aria-hidden /> Sign out
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
