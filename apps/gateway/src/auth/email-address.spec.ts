import fc from 'fast-check';
import { canonicalEmail } from './email-address';

describe('canonicalEmail', () => {
  it('makes composed and decomposed letters one address', () => {
    expect(canonicalEmail('Ren\u00e9@example.com')).toBe(canonicalEmail('Rene\u0301@example.com'));
    expect(canonicalEmail('Rene\u0301@example.com')).toBe('ren\u00e9@example.com');
  });

  it('folds case fully, not only to lower case', () => {
    expect(canonicalEmail('STRASSE@example.com')).toBe(canonicalEmail('stra\u00dfe@example.com'));
    expect(canonicalEmail('\u1e9e@example.com')).toBe('ss@example.com');
    expect(canonicalEmail('\u212a@example.com')).toBe('k@example.com');
    expect(canonicalEmail('ALICE@Example.COM')).toBe('alice@example.com');
  });

  it('spells a sigma one way wherever it stands', () => {
    expect(canonicalEmail('\u03bf\u03b4\u03bf\u03c2@example.gr')).toBe(canonicalEmail('\u039f\u0394\u039f\u03a3@example.gr'));
    expect(canonicalEmail('\u03a3a@example.gr')).toBe('\u03c3a@example.gr');
  });

  it('keeps addresses that differ in more than spelling apart', () => {
    expect(canonicalEmail('rene@example.com')).not.toBe(canonicalEmail('ren\u00e9@example.com'));
    expect(canonicalEmail('a.b@example.com')).not.toBe(canonicalEmail('ab@example.com'));
  });

  it('is idempotent and ignores the case and normal form it is given', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20 }), (text) => {
        const once = canonicalEmail(text);
        expect(canonicalEmail(once)).toBe(once);
        expect(canonicalEmail(text.normalize('NFD'))).toBe(once);
        expect(canonicalEmail(text.toUpperCase())).toBe(canonicalEmail(text.toLowerCase()));
      }),
    );
  });
});
