// The sidebar's project list reloads when a project is made, renamed or deleted elsewhere on the page.
export const PROJECTS_CHANGED = "mnemo:projects-changed";
