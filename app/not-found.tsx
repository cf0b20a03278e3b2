import Link from "next/link";

export default function NotFound() {
  return (
    <main className="flex min-h-dvh flex-col items-center justify-center gap-3 px-4 text-center">
      <h1 className="text-2xl font-semibold">Not found</h1>
      <p className="text-muted-foreground">There is nothing here, or you do not have access to it.</p>
      <Link href="/" className="text-primary hover:underline">
        Back to Mnemo
      </Link>
    </main>
  );
}
