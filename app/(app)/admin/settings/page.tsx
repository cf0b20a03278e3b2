import type { Metadata } from "next";
import { pageAdmin } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { resolveConnection, savedConnectionForForm } from "@/lib/llm/connection";
import { ModelSettingsForm } from "@/components/admin/model-settings-form";
import { ModelListForm } from "@/components/admin/model-list-form";
import { AttachmentLimitsForm } from "@/components/admin/attachment-limits-form";
import { attachmentLimits } from "@/lib/attachments/limits";
import { getConfig } from "@/lib/config";
import { builtinEmbedder } from "@/lib/llm/embeddings";

export const metadata: Metadata = { title: "Model settings" };

export default async function ModelSettingsPage() {
  await pageAdmin();
  const db = await getDb();
  const [saved, state, limits] = await Promise.all([
    savedConnectionForForm(db),
    resolveConnection(db),
    attachmentLimits(db),
  ]);
  const env = getConfig().attachments;
  return (
    <section className="grid max-w-xl gap-4" aria-labelledby="model-heading">
      <h2 id="model-heading" className="text-lg font-medium">
        Model connection
      </h2>
      <p className="text-sm text-muted-foreground">
        Any OpenAI-compatible server works: OpenAI, Ollama, vLLM, LM Studio, Azure OpenAI, Gemini&apos;s compatible
        endpoint. Values left empty fall back to the environment variables.
      </p>
      <p className="text-sm" data-testid="model-status">
        {state.configured
          ? `In use: ${state.connection.chatModel} (chat), ${state.connection.memoryModel} (memory) at ${state.connection.baseURL ?? "OpenAI"}.`
          : state.reason}
      </p>
      <p className="text-sm" data-testid="embedding-status">
        {state.configured && state.connection.embeddingModel
          ? `Recall by meaning: on, with ${state.connection.embeddingModel}.`
          : builtinEmbedder()
            ? "Recall by meaning: on, with the built-in sentence encoder (it runs on this server; nothing is sent). An embedding model set below replaces it."
            : "Recall by meaning: off. No embedding model is set, so recall matches words only (set one below or MNEMO_EMBEDDING_MODEL)."}
      </p>
      <ModelSettingsForm saved={saved} />
      {state.configured && (
        <>
          <h2 id="models-heading" className="mt-6 text-lg font-medium">
            Models people may use
          </h2>
          <p className="text-sm text-muted-foreground">
            Each chat and project picks one of these (the default unless they choose). &ldquo;Sees images&rdquo; lets
            pictures go to it; the context size keeps prompts within what it reads. /v1 clients see this list at GET
            /v1/models.
          </p>
          <ModelListForm models={state.models} />
        </>
      )}
      <h2 id="attachments-heading" className="mt-6 text-lg font-medium">
        Attachments
      </h2>
      <p className="text-sm text-muted-foreground">
        {env.s3
          ? `Files people attach are stored in the bucket ${env.s3.bucket} (object storage), each encrypted with a key only its row in the database holds.`
          : "Files people attach are stored in the database, sealed like their messages."}{" "}
        Empty fields use the environment (MNEMO_ATTACHMENT_MAX_MB, MNEMO_ATTACHMENT_USER_MB).
      </p>
      <AttachmentLimitsForm
        saved={{ fileMb: limits.saved.fileMb ?? null, userMb: limits.saved.userMb ?? null }}
        defaults={{ fileMb: Math.round(env.maxFileBytes / 1048576), userMb: Math.round(env.maxUserBytes / 1048576) }}
      />
    </section>
  );
}
