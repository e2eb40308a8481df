/** What most requests carry: the workspace they act in. */
export interface WorkspaceScoped {
  workspaceId: string;
}
