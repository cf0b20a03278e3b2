"use client";
import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import rehypeHighlight from "rehype-highlight";
import { ImageIcon } from "lucide-react";

/**
 * Images are never loaded automatically: a model's answer (or an imported
 * message) could point one at an attacker's server with the conversation in
 * its URL. They show as a link the reader can choose to open.
 */
function ImageLink({ src, alt }: { src?: string | Blob; alt?: string }) {
  const href = typeof src === "string" ? src : "";
  let host = "";
  try {
    host = new URL(href, "http://invalid.local").host;
  } catch {}
  const label = alt?.trim() || "image";
  if (!/^https?:/i.test(href)) return <span className="text-muted-foreground">[{label}]</span>;
  return (
    <a
      href={href}
      target="_blank"
      rel="noopener noreferrer nofollow"
      referrerPolicy="no-referrer"
      className="inline-flex items-center gap-1"
      data-testid="image-link"
    >
      <ImageIcon className="h-3.5 w-3.5" aria-hidden />
      {label} ({host}, not loaded)
    </a>
  );
}

const components: Components = { img: ({ src, alt }) => <ImageLink src={src} alt={alt} /> };

/** Message text as Markdown: GFM tables and lists, highlighted code. Raw HTML is not rendered. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <div className="prose prose-sm max-w-none break-words dark:prose-invert prose-pre:my-2 prose-pre:overflow-x-auto prose-pre:rounded-lg prose-pre:p-0 prose-code:before:content-none prose-code:after:content-none prose-table:block prose-table:overflow-x-auto">
      <ReactMarkdown
        remarkPlugins={[remarkGfm]}
        rehypePlugins={[[rehypeHighlight, { detect: true, ignoreMissing: true }]]}
        components={components}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
});
