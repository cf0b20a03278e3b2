"use client";
// The chat's model (lib/llm/models.ts): a plain select, so keyboards and phones get their native picker. Shown only
// when the admin offers more than one model.
import type { PickerModel } from "@/lib/chat/chat-setup";
import { cn } from "@/lib/cn";

export function ModelPicker({
  models,
  value,
  onChange,
  disabled,
  label = "Model for this chat",
  className,
}: {
  models: PickerModel[];
  value: string | null;
  onChange: (id: string) => void;
  disabled?: boolean;
  label?: string;
  className?: string;
}) {
  if (models.length < 2) return null;
  return (
    <select
      aria-label={label}
      data-testid="model-picker"
      className={cn(
        "h-8 max-w-[8rem] truncate rounded-md sm:max-w-[11rem] border border-input bg-background px-2 text-xs focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-50",
        className,
      )}
      value={value ?? models[0].id}
      disabled={disabled}
      onChange={(e) => onChange(e.target.value)}
    >
      {models.map((m, i) => (
        <option key={m.id} value={m.id}>
          {m.label}
          {i === 0 ? " (default)" : ""}
        </option>
      ))}
    </select>
  );
}
