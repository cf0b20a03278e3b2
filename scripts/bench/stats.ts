// Small helpers for benchmark scripts: percentiles and a fixed-width table.
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}

export const round = (n: number, d = 2) => (Number.isFinite(n) ? Math.round(n * 10 ** d) / 10 ** d : null);

export function table(rows: Array<Record<string, string | number | null>>): string {
  if (!rows.length) return "";
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "—").length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padStart(width[i])).join("  ");
  return [
    line(cols),
    line(width.map((w) => "-".repeat(w))),
    ...rows.map((r) => line(cols.map((c) => String(r[c] ?? "—")))),
  ].join("\n");
}
