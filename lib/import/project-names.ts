// A project the file has no name for (ChatGPT's export knows projects only by id) is named after its first
// conversation, earliest by its own date, however the file orders them; until the user renames it: a name Mnemo gave
// (one of its conversations' titles, or the id-based name of earlier imports) may be replaced, any other is theirs.
import type { UserContext } from "@/lib/user-context";
import { cutGraphemes } from "@/lib/text/policy";
import { chatGptPlaceholderName } from "./formats/chatgpt";

/** Names the projects (Mnemo ids, by their ref in the file); returns the names given. */
export async function nameAfterFirstConversation(u: UserContext, projects: Map<string, string>): Promise<string[]> {
  const { db, userId, cipher } = u;
  const given: string[] = [];
  for (const [ref, projectId] of projects) {
    const project = await db.project.findFirst({ where: { id: projectId, userId }, select: { name: true } });
    if (!project) continue;
    const threads = await db.thread.findMany({
      where: { userId, projectId, title: { not: null } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      select: { title: true },
      take: 1000,
    });
    const titles = threads.map((t) => cipher.open(t.title!).trim()).filter(Boolean);
    if (!titles.length) continue;
    const current = cipher.open(project.name);
    const ours = new Set([
      ...titles.map((t) => cutGraphemes(t, 80)),
      chatGptPlaceholderName(ref.replace(/^chatgpt:/, "")),
    ]);
    if (!ours.has(current)) continue; // the user's own name
    const name = cutGraphemes(titles[0], 80);
    if (name !== current) await db.project.update({ where: { id: projectId }, data: { name: cipher.seal(name) } });
    given.push(name);
  }
  return given;
}
