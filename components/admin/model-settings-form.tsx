"use client";
import { useState, useTransition } from "react";
import { saveModelSettingsAction, testModelConnectionAction, type Done } from "@/app/(app)/admin/actions";
import type { Result } from "@/lib/http/action";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { FormField } from "@/components/ui/form-field";

type Saved = { baseURL: string; chatModel: string; memoryModel: string; embeddingModel: string; hasApiKey: boolean };

export function ModelSettingsForm({ saved }: { saved: Saved }) {
  const [pending, start] = useTransition();
  const [result, setResult] = useState<Result<Done> | null>(null);
  const [clearKey, setClearKey] = useState(false);

  const values = (form: FormData) => {
    const apiKey = String(form.get("apiKey") ?? "");
    return {
      baseURL: String(form.get("baseURL") ?? ""),
      chatModel: String(form.get("chatModel") ?? ""),
      memoryModel: String(form.get("memoryModel") ?? ""),
      embeddingModel: String(form.get("embeddingModel") ?? ""),
      apiKey: apiKey || undefined,
      clearApiKey: clearKey,
    };
  };

  // onSubmit, not <form action>: React resets a form after its action, which put the saved URL back under the error
  // about the one typed.
  function submit(e: React.FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    start(async () => setResult(await saveModelSettingsAction(values(form))));
  }

  // Tests what is typed, saved or not: the admin checks a URL before saving it.
  function test(button: HTMLButtonElement) {
    const form = button.form;
    if (!form) return;
    start(async () => setResult(await testModelConnectionAction(values(new FormData(form)))));
  }

  return (
    <form onSubmit={submit} className="grid gap-4" autoComplete="off">
      {result && (
        <Alert variant={result.ok ? "success" : "error"}>
          {result.ok ? (result.data.message ?? "Saved.") : result.error}
        </Alert>
      )}
      <FormField
        id="baseURL"
        label="Base URL"
        placeholder="Empty: OPENAI_BASE_URL, or OpenAI"
        defaultValue={saved.baseURL}
        hint="For example http://localhost:11434/v1 for Ollama."
      />
      <FormField
        id="chatModel"
        label="Chat model"
        placeholder="Empty: MNEMO_CHAT_MODEL"
        defaultValue={saved.chatModel}
      />
      <FormField
        id="memoryModel"
        label="Memory model"
        placeholder="Empty: MNEMO_MEMORY_MODEL, or the chat model"
        defaultValue={saved.memoryModel}
      />
      <FormField
        id="embeddingModel"
        label="Embedding model"
        placeholder="Empty: MNEMO_EMBEDDING_MODEL, or the built-in encoder"
        defaultValue={saved.embeddingModel}
        hint="For recall by meaning: text-embedding-3-small (OpenAI), nomic-embed-text (Ollama). Empty, the sentence encoder built into Mnemo does it on this server (English best). Changing it re-embeds in the background."
      />
      <FormField
        id="apiKey"
        label="API key"
        type="password"
        autoComplete="new-password"
        placeholder={saved.hasApiKey ? "A key is stored. Type to replace it." : "Empty: OPENAI_API_KEY"}
        hint="Stored encrypted. It is never shown again."
      />
      {saved.hasApiKey && (
        <label className="flex items-center gap-2 text-sm">
          <input
            type="checkbox"
            checked={clearKey}
            onChange={(e) => setClearKey(e.target.checked)}
            className="h-4 w-4"
          />
          Remove the stored key
        </label>
      )}
      <div className="flex flex-wrap gap-2">
        <Button type="submit" disabled={pending}>
          {pending ? "Saving…" : "Save"}
        </Button>
        <Button type="button" variant="outline" disabled={pending} onClick={(e) => test(e.currentTarget)}>
          Test connection
        </Button>
      </div>
    </form>
  );
}
