import { CATALOGUES, ENGLISH, LOCALES, MessageKey, REQUIRED_PREFIXES, translate } from './i18n';

describe('message catalogues', () => {
  const shellKeys = (Object.keys(ENGLISH) as MessageKey[]).filter((key) => REQUIRED_PREFIXES.some((prefix) => key.startsWith(prefix)));

  it.each(LOCALES.filter((locale) => locale !== 'en'))('%s translates every string of the shell and of errors', (locale) => {
    expect(shellKeys.filter((key) => !CATALOGUES[locale][key])).toEqual([]);
  });

  it('holds no key that English lacks, and keeps every placeholder of the English text', () => {
    for (const locale of LOCALES) {
      for (const [key, text] of Object.entries(CATALOGUES[locale]) as Array<[MessageKey, string]>) {
        expect({ locale, key, known: key in ENGLISH }).toEqual({ locale, key, known: true });
        const placeholders = (value: string) => (value.match(/\{\w+\}/g) ?? []).sort();
        expect({ locale, key, placeholders: placeholders(text) }).toEqual({ locale, key, placeholders: placeholders(ENGLISH[key]) });
      }
    }
  });

  it('fills placeholders and falls back to English where a locale has no text', () => {
    expect(translate('en', 'ed.saved', { revision: 4 })).toBe('Saved revision 4.');
    expect(translate('pt', 'nav.decisions')).toBe('Decisões');
    expect(translate('zh', 'ed.saved', { revision: 2 })).toBe('Saved revision 2.');
  });
});
