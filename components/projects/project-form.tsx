"use client";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { createProjectAction, createSharedProjectAction, updateProjectAction } from "@/app/(app)/p/actions";
import type { ProjectSummary } from "@/lib/projects/projects";
import type { ProjectMemoryMode } from "@/lib/projects/scope";
import { PROJECTS_CHANGED } from "./events";
import type { PickerModel } from "@/lib/chat/chat-setup";

const MODES: Array<{ value: ProjectMemoryMode; label: string; help: string }> = [
  {
    value: "shared",
    label: "Shared memory",
    help: "Chats here also see your general memories and chats. What is learned here stays in the project.",
  },
  {
    value: "project_only",
    label: "Project only",
    help: "Chats here see only this project's memories and chats. Nothing from the project is used outside it.",
  },
];

/** A shared project's modes: whether each member's own memories help their own answers (lib/projects/own-memory.ts). */
const SHARED_MODES: typeof MODES = [
  {
    value: "project_only",
    label: "The project's memories only",
    help: "Answers here use what the project has learned, nothing from anyone's own memory.",
  },
  {
    value: "shared",
    label: "Also each member's own memories, for their own answers",
    help: "A member's answers here may also use their own general memories. Those stay theirs: the others never see them listed and the project never learns them, but they can read the answers.",
  },
];

/** Creates a project, or (given one) changes its name, instructions and memory mode. */
export function ProjectForm({ project, models = [] }: { project?: ProjectSummary; models?: PickerModel[] }) {
  const router = useRouter();
  const [name, setName] = useState(project?.name ?? "");
  const [instructions, setInstructions] = useState(project?.instructions ?? "");
  const [mode, setMode] = useState<ProjectMemoryMode | null>(project?.memoryMode ?? null);
  const [model, setModel] = useState(project?.model ?? "");
  // A shared project keeps its own memories only: a member's general memory is never the project's.
  const [share, setShare] = useState(project?.shared ?? false);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function save(e: React.FormEvent) {
    e.preventDefault();
    setSaving(true);
    setError(null);
    // In a shared project the owner alone sets the mode; a new shared project keeps to its own memories by default.
    const mayChooseMode = !project?.shared || project.role === "owner";
    const input = {
      name,
      instructions,
      ...(mayChooseMode ? { memoryMode: mode ?? (share ? "project_only" : "shared") } : {}),
      ...(models.length > 1 ? { model: model || null } : {}),
    };
    const r = project
      ? await updateProjectAction({ id: project.id, ...input })
      : share
        ? await createSharedProjectAction(input)
        : await createProjectAction(input);
    setSaving(false);
    if (!r.ok) return setError(r.error); // what the user typed stays in the form
    window.dispatchEvent(new Event(PROJECTS_CHANGED));
    if (project) {
      toast.success("Project saved.");
      router.refresh();
    } else router.push(`/p/${(r.data as { id: string }).id}`);
  }

  return (
    <form onSubmit={save} className="grid gap-4" aria-label={project ? "Project settings" : "New project"}>
      <div className="grid gap-1.5">
        <Label htmlFor="project-name">Name</Label>
        <Input
          id="project-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={80}
          required
          autoFocus={!project}
        />
      </div>
      <div className="grid gap-1.5">
        <Label htmlFor="project-instructions">Instructions</Label>
        <textarea
          id="project-instructions"
          value={instructions}
          onChange={(e) => setInstructions(e.target.value)}
          maxLength={4000}
          rows={5}
          placeholder="How should answers in this project be? E.g. “You are helping me write a mystery novel set in 1920s Lisbon.”"
          className="w-full rounded-md border border-input bg-background px-3 py-2 text-sm shadow-sm placeholder:text-muted-foreground focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
        />
        <p className="text-xs text-muted-foreground">Sent with every message in this project.</p>
      </div>
      {!project && (
        <label className="flex items-start gap-2 rounded-md border border-border p-3 text-sm">
          <input
            type="checkbox"
            checked={share}
            onChange={(e) => setShare(e.target.checked)}
            className="mt-0.5 h-4 w-4"
            data-testid="project-share"
          />
          <span>
            <span className="font-medium">Share with other people</span>
            <span className="block text-muted-foreground">
              Invite people who have an account here. Their chats in the project are visible to each other, and what the
              project learns is the project&apos;s, marked with who taught it. Your general memories are never shared.
            </span>
          </span>
        </label>
      )}
      {(!project?.shared || project.role === "owner") && (
        <fieldset className="grid gap-2">
          <legend className="mb-1 text-sm font-medium">Memory</legend>
          {(share ? SHARED_MODES : MODES).map((m) => (
            <label key={m.value} className="flex items-start gap-2 rounded-md border border-border p-3 text-sm">
              <input
                type="radio"
                name="memory-mode"
                value={m.value}
                checked={(mode ?? (share ? "project_only" : "shared")) === m.value}
                onChange={() => setMode(m.value)}
                className="mt-0.5 h-4 w-4"
              />
              <span>
                <span className="font-medium">{m.label}</span>
                <span className="block text-muted-foreground">{m.help}</span>
              </span>
            </label>
          ))}
        </fieldset>
      )}
      {models.length > 1 && (
        <div className="grid gap-1.5">
          <Label htmlFor="project-model">Model</Label>
          <select
            id="project-model"
            value={model}
            onChange={(e) => setModel(e.target.value)}
            className="h-9 rounded-md border border-input bg-background px-3 text-sm shadow-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
          >
            <option value="">The default ({models[0].label})</option>
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
          </select>
          <p className="text-xs text-muted-foreground">
            New chats in this project answer with it; a chat can pick another.
          </p>
        </div>
      )}
      {error && (
        <p role="alert" className="text-sm text-destructive">
          {error}
        </p>
      )}
      <div>
        <Button type="submit" disabled={saving || !name.trim()}>
          {saving ? "Saving…" : project ? "Save" : "Create project"}
        </Button>
      </div>
    </form>
  );
}
