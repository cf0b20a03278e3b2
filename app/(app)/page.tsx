import { Alert } from "@/components/ui/alert";
import { getDb } from "@/lib/db/client";
import { resolveConnection } from "@/lib/llm/connection";
import { pageUser } from "@/lib/auth/session";

export default async function HomePage() {
  const user = await pageUser();
  const state = await resolveConnection(await getDb());
  return (
    <div className="mx-auto flex max-w-3xl flex-col gap-6 px-4 py-10">
      <h1 className="text-2xl font-semibold">Hello{user.name ? `, ${user.name}` : ""}</h1>
      {state.configured ? (
        <p className="text-muted-foreground">
          Connected to <span className="font-mono text-foreground">{state.connection.chatModel}</span>
          {state.connection.baseURL ? ` at ${state.connection.baseURL}` : " on OpenAI"}.
        </p>
      ) : (
        <Alert variant="info" data-testid="model-missing">
          <p className="font-medium">Chat is not available yet</p>
          <p className="mt-1">{state.reason}</p>
        </Alert>
      )}
    </div>
  );
}
