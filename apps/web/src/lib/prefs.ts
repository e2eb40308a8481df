import { isLocale, Locale } from './i18n';

export type Theme = 'light' | 'dark' | 'system';
const THEMES: readonly Theme[] = ['light', 'dark', 'system'];

export function isTheme(value: unknown): value is Theme {
  return THEMES.includes(value as Theme);
}

/**
 * Theme and locale come, in order, from the page's query (`?theme=dark&locale=pt`, which is how an embed passes
 * them), from the user's last choice, and from the browser. A query value is remembered for the tab.
 */
export function initialPreferences(
  search: string,
  stored: (key: string) => string | null,
  browserLanguages: readonly string[],
): { theme: Theme; locale: Locale } {
  const query = new URLSearchParams(search);
  const queryTheme = query.get('theme');
  const storedTheme = stored('ds.theme');
  const theme = [queryTheme, storedTheme].find((value): value is Theme => THEMES.includes(value as Theme)) ?? 'system';
  const queryLocale = query.get('locale');
  const storedLocale = stored('ds.locale');
  const browser = browserLanguages.map((language) => language.slice(0, 2).toLowerCase()).find(isLocale);
  const locale = [queryLocale, storedLocale, browser].find(isLocale) ?? 'en';
  return { theme, locale };
}
