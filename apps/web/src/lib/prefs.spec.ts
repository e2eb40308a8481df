import { initialPreferences, isTheme } from './prefs';

const none = () => null;

describe('initial theme and locale', () => {
  it('takes the query first (what an embed passes), then the stored choice, then the browser', () => {
    const stored = (key: string) => ({ 'ds.theme': 'light', 'ds.locale': 'es' })[key] ?? null;
    expect(initialPreferences('?theme=dark&locale=ru', stored, ['pt-BR'])).toEqual({ theme: 'dark', locale: 'ru' });
    expect(initialPreferences('', stored, ['pt-BR'])).toEqual({ theme: 'light', locale: 'es' });
    expect(initialPreferences('', none, ['de-DE', 'pt-BR'])).toEqual({ theme: 'system', locale: 'pt' });
  });

  it('ignores values it does not know and ends at system and English', () => {
    expect(initialPreferences('?theme=neon&locale=fr', () => 'bogus', ['fr-FR'])).toEqual({ theme: 'system', locale: 'en' });
  });
});

describe('isTheme', () => {
  it('knows the three themes an embed session may name', () => {
    expect(['light', 'dark', 'system'].every(isTheme)).toBe(true);
    expect(isTheme('neon')).toBe(false);
    expect(isTheme(null)).toBe(false);
  });
});
