import { Button } from "@/components/ui/button";
import { oauthSignInAction } from "@/app/(auth)/actions";

export function OAuthButtons({
  providers,
  callbackUrl,
}: {
  providers: { id: string; name: string }[];
  callbackUrl?: string;
}) {
  if (!providers.length) return null;
  return (
    <div className="grid gap-2">
      {providers.map((p) => (
        <form key={p.id} action={oauthSignInAction}>
          <input type="hidden" name="provider" value={p.id} />
          <input type="hidden" name="callbackUrl" value={callbackUrl ?? "/"} />
          <Button type="submit" variant="outline" className="w-full">
            Continue with {p.name}
          </Button>
        </form>
      ))}
      <div className="my-2 flex items-center gap-3 text-xs text-muted-foreground" aria-hidden>
        <span className="h-px flex-1 bg-border" /> or <span className="h-px flex-1 bg-border" />
      </div>
    </div>
  );
}
