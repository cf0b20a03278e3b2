"use client";

import { useState } from "react";
import { ChatView, type ChatViewProps } from "./chat-view";

/**
 * A new chat's page. The server renders it again both when "New chat" is opened once more and when the router
 * refreshes (a server action's revalidation, even one a navigation overtook), and the two look alike from here.
 * Only a chat whose first message already made its thread gives way to a fresh one; before that, a refresh keeps
 * what is typed and the message on its way.
 */
export function NewChat({ visit, ...props }: Omit<ChatViewProps, "initial" | "onStarted"> & { visit: number }) {
  const [started, setStarted] = useState(false);
  const [shown, setShown] = useState({ visit, key: visit });
  if (visit !== shown.visit) {
    setShown({ visit, key: started ? visit : shown.key });
    setStarted(false);
  }
  return <ChatView key={shown.key} initial={null} onStarted={() => setStarted(true)} {...props} />;
}
