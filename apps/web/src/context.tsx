import { createContext, useContext } from 'react';
import type { Workspace } from './lib/api';
import type { Locale, MessageKey } from './lib/i18n';
import type { Theme } from './lib/prefs';

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
}

export const AppContext = createContext<AppState>(null as never);
export const useApp = () => useContext(AppContext);

const RANK = { viewer: 0, member: 1, admin: 2, owner: 3 } as const;

/** Whether the role reaches `minimum`, as the API checks it. */
export function can(workspace: Workspace | null, minimum: keyof typeof RANK): boolean {
  return workspace !== null && RANK[workspace.role] >= RANK[minimum];
}
