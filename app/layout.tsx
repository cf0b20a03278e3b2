import type { Metadata, Viewport } from "next";
import { headers } from "next/headers";
import { Toaster } from "sonner";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Mnemo", template: "%s · Mnemo" },
  description: "A chat app whose memory you can see and control.",
  icons: { icon: "/icon.svg" },
};
export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Rendered per request (never prerendered): Next.js puts this response's CSP nonce on its scripts.
  await headers();
  return (
    <html lang="en">
      <body className="min-h-dvh">
        {children}
        {/* Top right, below the headers (the thread's too, on a phone): never over the composer's Send button. */}
        <Toaster position="top-right" offset={{ top: 64 }} mobileOffset={{ top: 112 }} richColors closeButton />
      </body>
    </html>
  );
}
