import type { Metadata } from "next";
import { withKeyNames } from "@/lib/keys/key-reason";
import { inMemoryScope, userContext } from "@/lib/user-context";
import { projectScope } from "@/lib/projects/scope";
import { pageUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { listMemories, memoryListInput, relatedMemoryIds } from "@/lib/memory/long-term";
import { MemoryDashboard } from "@/components/memory/memory-dashboard";
import { getConfig } from "@/lib/config";
import { loadProfile, PROFILE_SHARE, profileSelection } from "@/lib/memory/profile";
import { resolveEmbedder } from "@/lib/llm/embeddings";
import { countPending } from "@/lib/memory/embed";
import { listConflicts } from "@/lib/memory/conflicts";
import { signalsForMemories } from "@/lib/memory/feedback";
import { openJson } from "@/lib/crypto/content";
import { stepsSchema } from "@/lib/memory/procedures";
import { memoryOrigin } from "@/lib/memory/portable";
import { goneSources } from "@/lib/memory/provenance";

/** Past this many memories the dashboard does not mark which ones stay out (the meter still counts them all). */
const PROFILE_SCAN = 2000;

export const metadata: Metadata = { title: "Memory" };
import { spanText, trueBeforeLearned, validSince } from "@/lib/memory/validity";
import { readAbout } from "@/lib/memory/about";
import { listAllProjects, listProjects } from "@/lib/projects/projects";
export const dynamic = "force-dynamic";

export default async function MemoryPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const user = await pageUser();
  const raw = await searchParams;
  const parsed = memoryListInput.safeParse({
    q: raw.q || undefined,
    kind: raw.kind || undefined,
    source: raw.source || undefined,
    status: raw.status || undefined,
    sort: raw.sort || undefined,
    scope: raw.scope || undefined,
  });
  const filters = parsed.success ? parsed.data : memoryListInput.parse({});
  const db = await getDb();
  const budget = getConfig().memory.tokenBudget;
  const u = await userContext(db, user.id); // the page's one context
  const cipher = u.cipher;
  const [projects, everyProject] = await Promise.all([listProjects(u), listAllProjects(u)]);
  // A memory can also be moved into a shared project the user may write in (lib/projects/share-existing.ts).
  const sharedProjects = everyProject.filter((p) => p.shared && p.role !== "viewer");
  // The meter shows what one place's chats see: the project filtered to, else chats in no project.
  const place = projects.find((p) => p.id === filters.scope) ?? null;
  const [memories, me, pending, muted, profile, embedder, conflicts, about, inProjects] = await Promise.all([
    listMemories(u, filters, { withoutArchived: true }),
    db.user.findUniqueOrThrow({ where: { id: user.id }, select: { memoryPaused: true, memoryReview: true } }),
    db.memory.count({ where: { userId: user.id, status: "pending" } }),
    db.memory.count({ where: { userId: user.id, status: "active", muted: true } }),
    loadProfile(inMemoryScope(u, projectScope(place)), PROFILE_SCAN),
    resolveEmbedder(db).catch(() => null),
    listConflicts(u),
    readAbout(u),
    place ? 0 : db.memory.count({ where: { userId: user.id, status: "active", projectId: { not: null } } }),
  ]);
  // A search also shows what it means without saying it: the memories the model's own search finds for those words
  // ("martial arts" → "Practises taekwondo"), with the page's other filters, best first.
  const relatedIds = filters.q
    ? await relatedMemoryIds(
        u,
        filters.q,
        projects.map((p) => p.id),
      )
    : [];
  const shownIds = new Set(memories.map((m) => m.id));
  const relatedRank = new Map(relatedIds.filter((id) => !shownIds.has(id)).map((id, i) => [id, i]));
  const related = relatedRank.size
    ? (
        await listMemories(u, { ...filters, q: undefined }, { ids: [...relatedRank.keys()], withoutArchived: true })
      ).sort((a, b) => relatedRank.get(a.id)! - relatedRank.get(b.id)!)
    : [];
  const listed = [...memories, ...related];
  const pendingIds = listed.filter((m) => m.status === "pending").map((m) => m.id);
  const [signals, replaced, gone, pendingVersions] = await Promise.all([
    signalsForMemories(
      db,
      user.id,
      listed.map((m) => m.id),
    ),
    // A memory's timeline: the past memories it replaced, newest first.
    db.memory.findMany({
      where: { userId: user.id, status: "past", supersededById: { in: listed.map((m) => m.id) } },
      select: { text: true, validFrom: true, validUntil: true, createdAt: true, supersededById: true },
      orderBy: { validUntil: "desc" },
    }),
    goneSources(db, user.id, listed),
    // Why each proposal waits: the reason its first version gives ("…; your message did not say it").
    pendingIds.length
      ? db.memoryVersion.findMany({
          where: { userId: user.id, memoryId: { in: pendingIds } },
          select: { memoryId: true, reason: true },
          orderBy: { createdAt: "asc" },
        })
      : [],
  ]);
  const whyPending = new Map<string, string>();
  const pendingReasons = await withKeyNames(
    db,
    user.id,
    cipher,
    pendingVersions.map((v) => v.reason),
  );
  pendingVersions.forEach((v, i) => {
    if (!whyPending.has(v.memoryId)) whyPending.set(v.memoryId, pendingReasons[i]);
  });
  const before = new Map<string, Array<{ text: string; span: string }>>();
  for (const p of replaced) {
    const list = before.get(p.supersededById!) ?? [];
    list.push({ text: cipher.open(p.text), span: spanText({ validFrom: validSince(p), validUntil: p.validUntil }) });
    before.set(p.supersededById!, list);
  }
  // Proposals (a model's change to another memory, lib/memory/writes.ts) show what they would change.
  const targetIds = listed.flatMap((m) => (m.proposalForId ? [m.proposalForId] : []));
  const targets = new Map(
    targetIds.length
      ? (
          await db.memory.findMany({
            where: { userId: user.id, id: { in: targetIds } },
            select: { id: true, text: true },
          })
        ).map((t) => [t.id, cipher.open(t.text)] as const)
      : [],
  );
  const stepsOf = (stored: unknown) => stepsSchema.safeParse(openJson(cipher, stored as string | null)).data ?? null;
  const { take, fits } = profileSelection(profile, budget);
  const alwaysIn = new Set(take.map((m) => m.id));
  const scanned = new Set(profile.memories.map((m) => m.id));
  const card = (m: (typeof listed)[number]) => ({
    id: m.id,
    text: m.text,
    kind: m.kind,
    source: m.source,
    status: m.status,
    pinned: m.pinned,
    muted: m.muted,
    projectId: m.projectId,
    private: m.private,
    expiresAt: m.expiresAt?.toISOString() ?? null,
    // Shown when it says more than "since it was learned": a past memory's span, a replacement's start, or the start
    // of one learned from old history.
    validity:
      m.status === "past" || before.has(m.id) || trueBeforeLearned(m)
        ? spanText({ validFrom: validSince(m), validUntil: m.status === "past" ? m.validUntil : null })
        : null,
    before: before.get(m.id) ?? [],
    sourceThreadId: m.sourceThreadId,
    sourceItemId: m.sourceItemId,
    sourceGone: gone.get(m.id) ?? null,
    fromFeedback: !!m.sourceFeedbackId,
    origin: memoryOrigin(m.sourceRef),
    verified: !!m.verifiedAt,
    needsRevalidation: m.needsRevalidation,
    steps: m.kind === "procedure" ? stepsOf(m.steps) : null,
    signals: signals.get(m.id) ?? null,
    proposal:
      m.status === "pending" && m.proposalOp && m.proposalForId
        ? { op: m.proposalOp, target: targets.get(m.proposalForId) ?? null }
        : null,
    whyPending: whyPending.get(m.id) ?? null,
    updatedAt: m.updatedAt.toISOString(),
    lastUsedAt: m.lastUsedAt?.toISOString() ?? null,
    onlyWhenRelevant: !fits && m.status === "active" && scanned.has(m.id) && !alwaysIn.has(m.id),
  });
  return (
    <MemoryDashboard
      about={{ text: about.text, at: about.at?.toISOString() ?? null, edited: about.edited }}
      conflicts={conflicts}
      filters={filters}
      projects={projects.map((p) => ({ id: p.id, name: p.name }))}
      sharedProjects={sharedProjects.map((p) => ({ id: p.id, name: p.name }))}
      settings={{ paused: me.memoryPaused, review: me.memoryReview }}
      // One count on the page: the header says what the meter below says (a memory's line costs more than its words).
      totals={{ count: profile.count, tokens: profile.cost, pending, muted, inProjects }}
      meter={{
        place: place ? { name: place.name, shared: place.memoryMode === "shared" } : null,
        inProjects,
        count: profile.count,
        cost: profile.cost,
        budget,
        share: Math.floor(budget * PROFILE_SHARE),
        fits,
        alwaysIn: fits ? profile.count : take.length,
        semantic: embedder
          ? { builtin: !embedder.connection, waiting: await countPending(db, embedder, user.id) }
          : null,
      }}
      memories={memories.map(card)}
      related={related.map(card)}
    />
  );
}
