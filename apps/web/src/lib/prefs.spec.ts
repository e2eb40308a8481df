import { initialPreferences } from './prefs';

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
