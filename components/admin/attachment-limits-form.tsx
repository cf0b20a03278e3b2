"use client";
// An admin sets how large an attached file may be and how much one person may keep (empty: the environment's).
import { useState, useTransition } from "react";
import { saveAttachmentLimitsAction } from "@/app/(app)/admin/actions";
import { Button } from "@/components/ui/button";
import { Alert } from "@/components/ui/alert";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";

type Props = { saved: { fileMb: number | null; userMb: number | null }; defaults: { fileMb: number; userMb: number } };

export function AttachmentLimitsForm({ saved, defaults }: Props) {
  const [fileMb, setFileMb] = useState(saved.fileMb === null ? "" : String(saved.fileMb));
  const [userMb, setUserMb] = useState(saved.userMb === null ? "" : String(saved.userMb));
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [pending, start] = useTransition();
  const parse = (v: string) => (v.trim() === "" ? null : Number(v.replaceAll(",", "")));
  return (
    <form
      className="grid gap-3"
      data-testid="attachment-limits-form"
      onSubmit={(e) => {
        e.preventDefault();
        start(async () => {
          const r = await saveAttachmentLimitsAction({ fileMb: parse(fileMb), userMb: parse(userMb) });
          setResult(r.ok ? { ok: true, text: r.data.message ?? "Saved." } : { ok: false, text: r.error });
        });
      }}
    >
      {result && <Alert variant={result.ok ? "success" : "error"}>{result.text}</Alert>}
      <div className="flex flex-wrap items-end gap-3">
        <div className="grid gap-1.5">
          <Label htmlFor="attachment-file-mb">Largest file (MB)</Label>
          <Input
            id="attachment-file-mb"
            className="w-36"
            inputMode="numeric"
            value={fileMb}
            placeholder={`${defaults.fileMb} (default)`}
            onChange={(e) => setFileMb(e.target.value)}
          />
        </div>
        <div className="grid gap-1.5">
          <Label htmlFor="attachment-user-mb">Per person in all (MB)</Label>
          <Input
            id="attachment-user-mb"
            className="w-36"
            inputMode="numeric"
            value={userMb}
            placeholder={`${defaults.userMb} (default)`}
            onChange={(e) => setUserMb(e.target.value)}
          />
        </div>
        <Button type="submit" disabled={pending}>
          {pending ? "Saving…" : "Save limits"}
        </Button>
      </div>
    </form>
  );
}
