"use client";
// "Export my data": downloads /api/export while showing how far it has got.
// The file is assembled in the browser from the streamed response, then saved.
import { useState } from "react";
import { Download } from "lucide-react";
import { Button } from "@/components/ui/button";

type State =
  | { phase: "idle" }
  | { phase: "running"; rows: number; total: number; bytes: number }
  | { phase: "done"; bytes: number }
  | { phase: "error"; message: string };

export function ExportData() {
  const [state, setState] = useState<State>({ phase: "idle" });

  async function run() {
    setState({ phase: "running", rows: 0, total: 0, bytes: 0 });
    try {
      const res = await fetch("/api/export", { cache: "no-store" });
      if (!res.ok || !res.body) throw new Error(`The export failed (${res.status}). Try again.`);
      const total = Number(res.headers.get("X-Export-Rows") ?? 0);
      const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") ?? "")?.[1] ?? "mnemo-export.json";
      const reader = res.body.getReader();
      const parts: Uint8Array[] = [];
      let rows = 0;
      let bytes = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parts.push(value);
        bytes += value.byteLength;
        for (const b of value) if (b === 10) rows++; // one row per line
        setState({ phase: "running", rows: Math.min(rows, total), total, bytes });
      }
      const blob = new Blob(parts as BlobPart[], { type: "application/json" });
      JSON.parse(await blob.text()); // a broken stream shows as an error, not a bad file
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setState({ phase: "done", bytes });
    } catch (e) {
      setState({
        phase: "error",
        message: e instanceof SyntaxError ? "The download was cut off. Try again." : (e as Error).message,
      });
    }
  }

  const kb = (n: number) =>
    n < 1024 * 1024 ? `${Math.max(1, Math.round(n / 1024))} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
  return (
    <div className="grid gap-3">
      <div>
        <Button onClick={run} disabled={state.phase === "running"}>
          <Download className="h-4 w-4" aria-hidden /> {state.phase === "running" ? "Exporting…" : "Export my data"}
        </Button>
      </div>
      {state.phase === "running" && (
        <div className="grid gap-1 text-sm" role="status" aria-live="polite">
          <progress
            className="h-2 w-full max-w-md"
            max={Math.max(state.total, 1)}
            value={state.rows}
            aria-label="Export progress"
          />
          <span className="text-muted-foreground">
            {state.rows.toLocaleString()} of {state.total.toLocaleString()} rows · {kb(state.bytes)}
          </span>
        </div>
      )}
      {state.phase === "done" && (
        <p className="text-sm text-muted-foreground" role="status">
          Done: saved {kb(state.bytes)} of JSON.
        </p>
      )}
      {state.phase === "error" && (
        <p className="text-sm text-destructive" role="alert">
          {state.message}
        </p>
      )}
    </div>
  );
}
