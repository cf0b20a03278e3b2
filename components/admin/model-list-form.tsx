"use client";
// The chat models people may use (lib/llm/models.ts): one row each, with its display name, whether it sees
// pictures and its context size; one is the default. Models are typed, or added from the server's own list.
import { useState, useTransition } from "react";
import { Plus, Trash2 } from "lucide-react";
import { probeImagesAction, saveModelListAction, serverModelsAction, type Done } from "@/app/(app)/admin/actions";
import type { Result } from "@/lib/http/action";
import type { ChatModel } from "@/lib/llm/models";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { Input } from "@/components/ui/input";

type Row = { key: number; id: string; label: string; vision: boolean; context: string };
let nextKey = 0;
const row = (m: Partial<ChatModel> = {}): Row => ({
  key: nextKey++,
  id: m.id ?? "",
  label: m.label && m.label !== m.id ? m.label : "",
  vision: !!m.vision,
  context: m.contextTokens ? String(m.contextTokens) : "",
});

export function ModelListForm({ models }: { models: ChatModel[] }) {
  const [rows, setRows] = useState<Row[]>(() => models.map((m) => row(m)));
  const [defaultKey, setDefaultKey] = useState(rows[0]?.key ?? -1);
  const [offered, setOffered] = useState<string[] | null>(null);
  const [result, setResult] = useState<Result<Done> | null>(null);
  const [pending, start] = useTransition();

  const change = (key: number, patch: Partial<Row>) =>
    setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const add = (id = "") => {
    const r = row({ id });
    setRows((rs) => [...rs, r]);
    if (!rows.length) setDefaultKey(r.key);
  };

  function save(e: React.FormEvent) {
    e.preventDefault();
    const list = rows.map((r) => ({
      id: r.id.trim(),
      label: r.label.trim(),
      vision: r.vision,
      contextTokens: r.context.trim() ? Number(r.context.replaceAll(",", "")) : null,
    }));
    const defaultId = rows.find((r) => r.key === defaultKey)?.id.trim() ?? "";
    start(async () => setResult(await saveModelListAction({ models: list, defaultId })));
  }

  function fromServer() {
    start(async () => {
      const r = await serverModelsAction();
      if (r.ok) setOffered(r.data);
      else setResult({ ok: false, error: r.error });
    });
  }
  // Asks the server whether it takes a picture for this model, and ticks or unticks "Sees images" by the answer.
  function probe(r: Row) {
    if (!r.id.trim()) return;
    start(async () => {
      const res = await probeImagesAction(r.id.trim());
      if (res.ok) change(r.key, { vision: res.data.vision });
      setResult(res.ok ? { ok: true, data: { message: res.data.message } } : { ok: false, error: res.error });
    });
  }
  const notListed = (offered ?? []).filter((id) => !rows.some((r) => r.id.trim() === id));

  return (
    <form onSubmit={save} className="grid gap-3" data-testid="model-list-form">
      {result && (
        <Alert variant={result.ok ? "success" : "error"}>
          {result.ok ? (result.data.message ?? "Saved.") : result.error}
        </Alert>
      )}
      <div className="grid gap-2">
        {rows.map((r, i) => (
          <fieldset
            key={r.key}
            className="grid grid-cols-1 gap-2 rounded-md border border-border p-2 sm:grid-cols-3"
            aria-label={`Model ${i + 1}`}
          >
            <Input
              aria-label="Model name on the server"
              placeholder="Name on the server"
              value={r.id}
              onChange={(e) => change(r.key, { id: e.target.value })}
              maxLength={200}
            />
            <Input
              aria-label="Display name"
              placeholder="Display name"
              value={r.label}
              onChange={(e) => change(r.key, { label: e.target.value })}
              maxLength={80}
            />
            <Input
              aria-label="Context size in tokens"
              placeholder="Context (tokens)"
              inputMode="numeric"
              value={r.context}
              onChange={(e) => change(r.key, { context: e.target.value })}
            />
            <div className="flex items-center gap-3 text-sm sm:col-span-3">
              <label className="flex items-center gap-1">
                <input
                  type="checkbox"
                  className="h-4 w-4"
                  checked={r.vision}
                  onChange={(e) => change(r.key, { vision: e.target.checked })}
                />
                Sees images
              </label>
              <Button
                type="button"
                variant="outline"
                size="sm"
                disabled={pending || !r.id.trim()}
                onClick={() => probe(r)}
                title="Send the model a tiny picture and see whether the server takes it"
              >
                Test pictures
              </Button>
              <label className="flex items-center gap-1">
                <input
                  type="radio"
                  name="default-model"
                  className="h-4 w-4"
                  checked={defaultKey === r.key}
                  onChange={() => setDefaultKey(r.key)}
                />
                Default
              </label>
              <Button
                type="button"
                variant="ghost"
                size="sm"
                aria-label={`Remove ${r.id || "this model"}`}
                disabled={rows.length === 1}
                onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))}
              >
                <Trash2 className="h-4 w-4" />
              </Button>
            </div>
          </fieldset>
        ))}
      </div>
      {offered && (
        <div className="grid gap-1 text-sm" data-testid="server-models">
          {notListed.length ? (
            <>
              <p className="text-muted-foreground">On the server, not yet offered:</p>
              <div className="flex flex-wrap gap-1">
                {notListed.slice(0, 100).map((id) => (
                  <Button key={id} type="button" variant="outline" size="sm" onClick={() => add(id)}>
                    <Plus className="h-3.5 w-3.5" /> {id}
                  </Button>
                ))}
              </div>
            </>
          ) : (
            <p className="text-muted-foreground">Every model the server lists is offered.</p>
          )}
        </div>
      )}
      <div className="flex flex-wrap gap-2">
        <Button type="submit" disabled={pending}>
          {pending ? "Saving…" : "Save models"}
        </Button>
        <Button type="button" variant="outline" disabled={pending || rows.length >= 50} onClick={() => add()}>
          <Plus className="h-4 w-4" /> Add a model
        </Button>
        <Button type="button" variant="outline" disabled={pending} onClick={fromServer}>
          List the server&apos;s models
        </Button>
      </div>
    </form>
  );
}
