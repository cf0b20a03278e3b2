import * as React from "react";
import { cn } from "@/lib/cn";

/** A message box. Errors use role="alert" so screen readers announce them. */
export function Alert({
  variant = "info",
  className,
  ...props
}: React.HTMLAttributes<HTMLDivElement> & { variant?: "info" | "error" | "success" }) {
  return (
    <div
      role={variant === "error" ? "alert" : "status"}
      className={cn(
        "rounded-md border px-3 py-2 text-sm",
        variant === "error" && "border-destructive/40 bg-destructive/10 text-destructive",
        variant === "info" && "border-border bg-muted text-foreground",
        variant === "success" && "border-green-600/40 bg-green-600/10 text-green-700 dark:text-green-400",
        className,
      )}
      {...props}
    />
  );
}
