-- CreateIndex
CREATE INDEX "Memory_userId_projectId_status_pinned_source_useCount_idx" ON "Memory"("userId", "projectId", "status", "pinned", "source", "useCount" DESC);

