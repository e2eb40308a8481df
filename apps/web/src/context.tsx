import { createContext, useContext } from 'react';
import type { EmbedSessionView, Workspace } from './lib/api';
import type { Locale, MessageKey } from './lib/i18n';
import type { Theme } from './lib/prefs';
import { EmbedPermission, permits, reachesRole, Role } from './lib/access';

export interface AppState {
  locale: Locale;
  setLocale(locale: Locale): void;
  theme: Theme;
  setTheme(theme: Theme): void;
  t(key: MessageKey, vars?: Record<string, string | number>): string;
  signedIn: boolean;
  signIn(token: string): void;
  signOut(): void;
  workspaces: Workspace[] | null;
  workspace: Workspace | null;
  chooseWorkspace(id: string): void;
  reloadWorkspaces(): Promise<Workspace[]>;
  /** The embed session when the application runs inside a partner's page; null when standalone. */
  embed: EmbedSessionView | null;
}

export const AppContext = createContext<AppState>(null as never);
export const useApp = () => useContext(AppContext);

/** Whether the member's role reaches `minimum`, as the API checks it; an embed session has no role. */
export function can(workspace: Workspace | null, minimum: Role): boolean {
  return reachesRole(workspace, minimum);
}

/** Whether what `permission` covers is allowed: an embed session's permissions, or the member's role. */
export function may(workspace: Workspace | null, permission: EmbedPermission): boolean {
  return permits(workspace, permission);
}
