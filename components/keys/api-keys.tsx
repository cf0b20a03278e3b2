"use client";
import { useState, useTransition } from "react";
import { toast } from "sonner";
import { Copy, KeyRound } from "lucide-react";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { createApiKeyAction, revokeApiKeyAction } from "@/app/(app)/settings/keys/actions";
import type { ApiKeySummary, ApiScope } from "@/lib/keys/api-keys";
import { LocalDate } from "@/components/ui/local-date";

const SCOPES: Array<{ value: ApiScope; label: string }> = [
  {
    value: "chat",
    label: "chat: answers with your memory (/v1: chat completions, responses, conversations, embeddings)",
  },
  { value: "memory:read", label: "memory:read: search and list memories" },
  { value: "memory:write", label: "memory:write: remember, change and forget (follows review)" },
];
const when = (iso: string | null) => (iso ? <LocalDate value={iso} time /> : "never");

/** Make, see and revoke personal API keys; a new key is shown once. */
export function ApiKeys({
  keys,
  projects,
  baseUrl,
}: {
  keys: ApiKeySummary[];
  projects: Array<{ id: string; name: string }>;
  baseUrl: string;
}) {
  const [busy, start] = useTransition();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<ApiScope[]>(["chat"]);
  const [projectId, setProjectId] = useState("");
  const [made, setMade] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const projectName = (id: string | null) => projects.find((p) => p.id === id)?.name;

  const create = (e: React.FormEvent) => {
    e.preventDefault();
    start(async () => {
      setError(null);
      const r = await createApiKeyAction({ name, scopes, projectId: projectId || null });
      if (!r.ok) return setError(r.error);
      setMade(r.data.key);
      setName("");
    });
  };

  return (
    <div className="grid gap-6">
      {made && (
        <div className="rounded-lg border border-emerald-500/40 bg-emerald-500/10 p-4 text-sm" data-testid="new-key">
          <p className="font-medium">Your new key. Copy it now: it is not shown again.</p>
          <div className="mt-2 flex items-center gap-2">
            <code className="min-w-0 flex-1 break-all rounded bg-background px-2 py-1" data-testid="new-key-value">
              {made}
            </code>
            <Button
              size="sm"
              variant="outline"
              onClick={() => void navigator.clipboard?.writeText(made).then(() => toast.success("Copied."))}
            >
              <Copy className="h-4 w-4" aria-hidden /> Copy
            </Button>
          </div>
          <pre className="mt-3 overflow-x-auto rounded bg-background p-2 text-xs">{`OPENAI_BASE_URL=${baseUrl}\nOPENAI_API_KEY=${made}`}</pre>
        </div>
      )}
      <form onSubmit={create} className="grid gap-3 rounded-lg border border-border p-4" aria-label="New API key">
        <div className="grid gap-1.5">
          <Label htmlFor="key-name">Name</Label>
          <Input
            id="key-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={60}
            placeholder="laptop"
          />
        </div>
        <fieldset className="grid gap-1 text-sm">
          <legend className="mb-1 text-sm font-medium">Scopes</legend>
          {SCOPES.map((s) => (
            <label key={s.value} className="flex items-center gap-2">
              <input
                type="checkbox"
                className="h-4 w-4"
                checked={scopes.includes(s.value)}
                onChange={(e) =>
                  setScopes((prev) => (e.target.checked ? [...prev, s.value] : prev.filter((x) => x !== s.value)))
                }
              />
              {s.label}
            </label>
          ))}
        </fieldset>
        {projects.length > 0 && (
          <div className="grid gap-1.5">
            <Label htmlFor="key-project">Project</Label>
            <select
              id="key-project"
              value={projectId}
              onChange={(e) => setProjectId(e.target.value)}
              className="h-9 rounded-md border border-input bg-background px-2 text-sm"
            >
              <option value="">None (general memory)</option>
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </div>
        )}
        {error && (
          <p role="alert" className="text-sm text-destructive">
            {error}
          </p>
        )}
        <div>
          <Button type="submit" disabled={busy || !name.trim() || !scopes.length}>
            <KeyRound className="h-4 w-4" aria-hidden /> Create key
          </Button>
        </div>
      </form>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading" className="text-sm font-medium">
          Your keys
        </h2>
        {keys.length ? (
          <ul className="mt-2 divide-y divide-border rounded-lg border border-border" data-testid="api-keys">
            {keys.map((k) => (
              <li key={k.id} className="flex flex-wrap items-center gap-3 p-3 text-sm" data-testid="api-key">
                <div className="min-w-0 flex-1">
                  <p className="font-medium">
                    {k.name} <code className="text-xs text-muted-foreground">{k.prefix}…</code>
                    {k.revokedAt && <span className="ml-2 rounded bg-muted px-1.5 py-0.5 text-xs">revoked</span>}
                  </p>
                  <p className="text-xs text-muted-foreground">
                    {k.scopes.join(", ")}
                    {k.projectId ? ` · project ${projectName(k.projectId) ?? ""}` : ""} · made {when(k.createdAt)} ·
                    last used {when(k.lastUsedAt)}
                  </p>
                </div>
                {!k.revokedAt && (
                  <Button
                    size="sm"
                    variant="outline"
                    disabled={busy}
                    onClick={() =>
                      start(async () => {
                        if (!window.confirm(`Revoke “${k.name}”? Tools using it stop working at once.`)) return;
                        const r = await revokeApiKeyAction(k.id);
                        if (r.ok) toast.success("Key revoked.");
                        else toast.error(r.error);
                      })
                    }
                  >
                    Revoke
                  </Button>
                )}
              </li>
            ))}
          </ul>
        ) : (
          <p className="mt-2 text-sm text-muted-foreground">No keys yet.</p>
        )}
      </section>
    </div>
  );
}
