import { chooseContentCoding, etagMatches, PrebuiltCoding } from './content-coding';

const BOTH: PrebuiltCoding[] = ['br', 'gzip'];

describe('chooseContentCoding', () => {
  it('prefers brotli when both are allowed, as browsers ask', () => {
    expect(chooseContentCoding('gzip, deflate, br, zstd', BOTH)).toBe('br');
    expect(chooseContentCoding('br, gzip', BOTH)).toBe('br');
    expect(chooseContentCoding('gzip, br', BOTH)).toBe('br');
    expect(chooseContentCoding('GZIP, BR', BOTH)).toBe('br');
  });

  it('answers gzip to a client that does not take brotli, or when only gzip was built', () => {
    expect(chooseContentCoding('gzip, deflate', BOTH)).toBe('gzip');
    expect(chooseContentCoding('x-gzip', BOTH)).toBe('gzip');
    expect(chooseContentCoding('gzip, deflate, br', ['gzip'])).toBe('gzip');
  });

  it('follows q-values: the highest weight wins, ties go to the smaller body', () => {
    expect(chooseContentCoding('br;q=0.5, gzip;q=0.8', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;q=0.8, gzip;q=0.8', BOTH)).toBe('br');
    expect(chooseContentCoding('br;q=0.8, gzip', BOTH)).toBe('gzip');
    expect(chooseContentCoding('gzip;q=0.5, identity', BOTH)).toBe('identity');
    expect(chooseContentCoding('gzip;q=1.0, identity;q=0.9', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;q=0.001', BOTH)).toBe('br');
    expect(chooseContentCoding('gzip;q=0.2, *;q=0.5', ['gzip'])).toBe('identity');
    expect(chooseContentCoding(' br ; q=0.9 , gzip ; q=0.1 ', BOTH)).toBe('br');
  });

  it('never sends a coding whose q is 0', () => {
    expect(chooseContentCoding('br;q=0, gzip', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;q=0, gzip;q=0', BOTH)).toBe('identity');
    expect(chooseContentCoding('br;q=0.000', ['br'])).toBe('identity');
    expect(chooseContentCoding('*, br;q=0', BOTH)).toBe('gzip');
  });

  it('gives codings not named the weight of the wildcard', () => {
    expect(chooseContentCoding('*', BOTH)).toBe('br');
    expect(chooseContentCoding('*', ['gzip'])).toBe('gzip');
    expect(chooseContentCoding('gzip;q=0.5, *;q=0.9', BOTH)).toBe('br');
    expect(chooseContentCoding('*;q=0', BOTH)).toBe('identity');
  });

  it('answers identity without a header, with an empty one, to identity alone and when nothing encoded exists', () => {
    expect(chooseContentCoding(undefined, BOTH)).toBe('identity');
    expect(chooseContentCoding('', BOTH)).toBe('identity');
    expect(chooseContentCoding('identity', BOTH)).toBe('identity');
    expect(chooseContentCoding('deflate, zstd', BOTH)).toBe('identity');
    expect(chooseContentCoding('br, gzip', [])).toBe('identity');
  });

  it('still answers identity when the client refuses it and everything we have', () => {
    expect(chooseContentCoding('identity;q=0', [])).toBe('identity');
    expect(chooseContentCoding('identity;q=0, zstd', BOTH)).toBe('identity');
    expect(chooseContentCoding('identity;q=0, gzip;q=0.1', BOTH)).toBe('gzip');
  });

  it('drops an entry whose q-value is not one, rather than guessing its weight', () => {
    expect(chooseContentCoding('br;q=high, gzip', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;q=2, gzip', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;q=-1', BOTH)).toBe('identity');
    expect(chooseContentCoding('br;q=0.1234, gzip', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;q=, gzip', BOTH)).toBe('gzip');
  });

  it('keeps the higher weight of a coding named twice, and ignores empty entries and other parameters', () => {
    expect(chooseContentCoding('br;q=0, br, gzip;q=0.5', BOTH)).toBe('br');
    expect(chooseContentCoding(',, gzip ,', BOTH)).toBe('gzip');
    expect(chooseContentCoding('br;level=3', BOTH)).toBe('br');
  });
});

describe('etagMatches', () => {
  it('matches the tag alone, in a list, weakly and by wildcard', () => {
    expect(etagMatches('"abc-br"', '"abc-br"')).toBe(true);
    expect(etagMatches('"x", "abc-br"', '"abc-br"')).toBe(true);
    expect(etagMatches('W/"abc-br"', '"abc-br"')).toBe(true);
    expect(etagMatches('*', '"abc-br"')).toBe(true);
  });

  it('does not match another representation, another tag or no header', () => {
    expect(etagMatches('"abc-gzip"', '"abc-br"')).toBe(false);
    expect(etagMatches('"abc"', '"abc-br"')).toBe(false);
    expect(etagMatches('', '"abc-br"')).toBe(false);
    expect(etagMatches(undefined, '"abc-br"')).toBe(false);
  });
});
