// The Content-Security-Policy of every page. Scripts run only from this origin
// with this response's nonce ('strict-dynamic' lets those load Next.js's
// chunks): an injected <script> or inline handler never runs, even if some
// text were one day rendered as HTML. Images, media, fonts and connections stay
// on this origin (a model's answer or an imported message cannot make the
// reader's browser fetch another site); no framing, plugins or foreign forms.
// Styles keep 'unsafe-inline' (React style attributes); styles cannot run code.

/** A fresh nonce per response (128 random bits). */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

export function contentSecurityPolicy(nonce: string, dev = process.env.NODE_ENV !== "production"): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "media-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
