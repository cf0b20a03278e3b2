"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useCallback, useEffect, useState } from "react";
import { toast } from "sonner";
import { Folder, FolderPlus } from "lucide-react";
import { listProjectsAction } from "@/app/(app)/p/actions";
import type { ProjectSummary } from "@/lib/projects/projects";
import { cn } from "@/lib/cn";
import { PROJECTS_CHANGED } from "./events";

/** The user's projects, kept current across the page (creating, renaming, deleting one). */
export function useProjects() {
  const [projects, setProjects] = useState<ProjectSummary[] | null>(null);
  const load = useCallback(async () => {
    const r = await listProjectsAction();
    if (r.ok) setProjects(r.data);
    else toast.error(r.error);
  }, []);
  useEffect(() => {
    const first = setTimeout(() => void load(), 0);
    window.addEventListener(PROJECTS_CHANGED, load);
    return () => {
      clearTimeout(first);
      window.removeEventListener(PROJECTS_CHANGED, load);
    };
  }, [load]);
  return projects;
}

/** The user's projects, or none while they load. */
export function useProjectList(): ProjectSummary[] {
  return useProjects() ?? [];
}

/** The sidebar's projects: each opens its page (its chats, a new chat in it, its settings). */
export function ProjectList() {
  const loaded = useProjects();
  const projects = loaded ?? [];
  const pathname = usePathname();
  return (
    <nav aria-label="Projects" className="grid grid-cols-[minmax(0,1fr)] gap-0.5" data-testid="project-list">
      <div className="flex items-center justify-between px-2 text-xs text-muted-foreground">
        <span>Projects</span>
        <Link
          href="/p/new"
          className="rounded p-1 hover:bg-accent focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          aria-label="New project"
          title="New project"
        >
          <FolderPlus className="h-4 w-4" aria-hidden />
        </Link>
      </div>
      {projects.map((p) => {
        const active = pathname === `/p/${p.id}` || pathname.startsWith(`/p/${p.id}/`);
        return (
          <Link
            key={p.id}
            href={`/p/${p.id}`}
            aria-current={active ? "page" : undefined}
            className={cn(
              "flex min-w-0 items-center gap-2 rounded-md px-2 py-1.5 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring",
              active ? "bg-accent" : "hover:bg-accent/60",
            )}
          >
            <Folder className="h-4 w-4 shrink-0 text-muted-foreground" aria-hidden />
            <span className="truncate">{p.name}</span>
            <span className="ml-auto shrink-0 text-xs text-muted-foreground">{p.threads || ""}</span>
          </Link>
        );
      })}
      {loaded && !projects.length && (
        <Link href="/p/new" className="px-2 py-1 text-xs text-muted-foreground hover:underline">
          Group chats and memories in a project
        </Link>
      )}
    </nav>
  );
}
