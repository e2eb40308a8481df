import { CATALOGUES, ENGLISH, expandPlurals, LOCALES, MessageKey, REQUIRED_PREFIXES, translate } from './i18n';

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

describe('plurals', () => {
  it('picks the form of the number in English, one and other', () => {
    expect(translate('en', 'ed.kind.options', { count: 1 })).toBe('1 option');
    expect(translate('en', 'ed.kind.options', { count: 0 })).toBe('0 options');
    expect(translate('en', 'ed.kind.options', { count: 3 })).toBe('3 options');
    expect(translate('en', 'acct.endedOthers', { count: 1 })).toBe('1 other session signed out.');
    expect(translate('en', 'ed.issues', { count: 2 })).toBe('2 issues in the schema');
  });

  it('shows a formatted figure while choosing the form by the number', () => {
    expect(translate('en', 'use.summary.total', { count: 1, used: '1', limits: 'x' })).toBe('1 billed decision this period; x.');
    expect(translate('en', 'use.summary.total', { count: 1200, used: '1,200', limits: 'x' })).toBe('1,200 billed decisions this period; x.');
    expect(translate('en', 'use.summary.perDecision', { decisions: 1, top: 'a', billed: '3', shown: 1 })).toMatch(/^1 decision billed this period/);
  });

  it('follows the locale’s own plural rules and exact branches', () => {
    const ru = '{n, plural, =0 {нет} one {# файл} few {# файла} many {# файлов} other {# файла}}';
    expect(expandPlurals(ru, 'ru', { n: 0 })).toBe('нет');
    expect(expandPlurals(ru, 'ru', { n: 21 })).toBe('21 файл');
    expect(expandPlurals(ru, 'ru', { n: 3 })).toBe('3 файла');
    expect(expandPlurals(ru, 'ru', { n: 11 })).toBe('11 файлов');
    expect(expandPlurals('{n, plural, other {# 个}}', 'zh', { n: 1 })).toBe('1 个');
  });

  it('leaves text without a plural, or with a broken one, as it is', () => {
    expect(expandPlurals('plain {n}', 'en', { n: 1 })).toBe('plain {n}');
    expect(expandPlurals('{n, plural, one {# a', 'en', { n: 1 })).toBe('{n, plural, one {# a');
  });

  it('writes no "(s)" in English', () => {
    expect(Object.entries(ENGLISH).filter(([, text]) => text.includes('(s)'))).toEqual([]);
  });
});
