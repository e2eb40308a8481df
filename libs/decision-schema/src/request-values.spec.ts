import { INT4_MAX, MAX_DECISION_VERSION } from '@ds/contracts';
import { parseInstant, parseVersionNumber, parseVersionText, VERSION_NUMBER_MAX } from './request-values';

function instant(value: unknown): string | null {
  const parsed = parseInstant(value, 'from');
  return parsed.ok ? parsed.value.toISOString() : null;
}

function refusal(value: unknown): string {
  const parsed = parseInstant(value, 'from');
  if (parsed.ok) throw new Error(`${String(value)} was accepted`);
  expect(parsed.issue.path).toBe('from');
  return parsed.issue.message;
}

describe('parseInstant', () => {
  it.each([
    ['2026-05-01', '2026-05-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['2026-12-31', '2026-12-31T00:00:00.000Z'],
    ['2026-04-30', '2026-04-30T00:00:00.000Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000Z'],
    ['0099-06-15', '0099-06-15T00:00:00.000Z'],
    ['9999-12-31', '9999-12-31T00:00:00.000Z'],
  ])('reads the date %s as midnight UTC', (value, expected) => {
    expect(instant(value)).toBe(expected);
  });

  it.each([
    ['2026-05-01T12:00Z', '2026-05-01T12:00:00.000Z'],
    ['2026-05-01T12:00:30Z', '2026-05-01T12:00:30.000Z'],
    ['2026-05-01T23:59:59Z', '2026-05-01T23:59:59.000Z'],
    ['2026-05-01T00:00:00.5Z', '2026-05-01T00:00:00.500Z'],
    ['2026-05-01T00:00:00.12Z', '2026-05-01T00:00:00.120Z'],
    ['2026-05-01T00:00:00.123Z', '2026-05-01T00:00:00.123Z'],
    ['2026-05-01T00:00:00.123456Z', '2026-05-01T00:00:00.123Z'],
    ['2026-05-01T00:00:00.999999999Z', '2026-05-01T00:00:00.999Z'],
    ['2026-05-01T12:00:00+02:00', '2026-05-01T10:00:00.000Z'],
    ['2026-05-01T12:00:00-05:30', '2026-05-01T17:30:00.000Z'],
    ['2026-05-01T12:00+00:00', '2026-05-01T12:00:00.000Z'],
    ['2026-05-01T12:00:00-00:00', '2026-05-01T12:00:00.000Z'],
    ['2026-05-01T00:30:00+01:00', '2026-04-30T23:30:00.000Z'],
    ['2026-12-31T23:00:00-02:00', '2027-01-01T01:00:00.000Z'],
    ['2026-05-01T12:00:00+23:59', '2026-04-30T12:01:00.000Z'],
    ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0001-01-01T00:30:00+00:30', '0001-01-01T00:00:00.000Z'],
  ])('reads the timestamp %s', (value, expected) => {
    expect(instant(value)).toBe(expected);
  });

  it.each([
    ['2026-02-30', 'February 2026 has no day 30'],
    ['2026-02-29', 'February 2026 has no day 29'],
    ['1900-02-29', 'February 1900 has no day 29'],
    ['2100-02-29', 'February 2100 has no day 29'],
    ['2026-04-31', 'April 2026 has no day 31'],
    ['2026-06-31', 'June 2026 has no day 31'],
    ['2026-09-31', 'September 2026 has no day 31'],
    ['2026-11-31', 'November 2026 has no day 31'],
    ['2026-01-32', 'January 2026 has no day 32'],
    ['2026-01-00', 'January 2026 has no day 00'],
    ['2026-13-01', 'there is no month 13'],
    ['2026-00-10', 'there is no month 00'],
    ['0000-01-01', 'year 0000 does not exist'],
    ['2026-02-29T12:00:00Z', 'February 2026 has no day 29'],
    ['2026-05-01T24:00:00Z', 'hours run from 00 to 23'],
    ['2026-05-01T23:60:00Z', 'minutes and seconds from 00 to 59'],
    ['2026-05-01T23:59:60Z', 'minutes and seconds from 00 to 59'],
    ['2026-05-01T12:00:00+24:00', 'an offset runs from -23:59 to +23:59'],
    ['2026-05-01T12:00:00+01:60', 'an offset runs from -23:59 to +23:59'],
    ['0001-01-01T00:00:00+00:01', 'instants run from year 0001 to year 9999'],
    ['9999-12-31T23:59:59-00:01', 'instants run from year 0001 to year 9999'],
  ])('refuses %s, which does not exist, saying why', (value, reason) => {
    const message = refusal(value);
    expect(message).toContain('must be an ISO 8601 date');
    expect(message).toContain(reason);
  });

  it.each([
    '',
    ' 2026-05-01',
    '2026-05-01 ',
    '2026-5-1',
    '26-05-01',
    '+002026-05-01',
    '2026/05/01',
    '20260501',
    '2026-05-01T12:00:00',
    '2026-05-01T12',
    '2026-05-01T12:00:00.Z',
    '2026-05-01T12:00:00.1234567890Z',
    '2026-05-01T12:00.5Z',
    '2026-05-01 12:00:00Z',
    '2026-05-01t12:00:00Z',
    '2026-05-01T12:00:00z',
    '2026-05-01T12:00:00+0200',
    '2026-05-01T12:00:00+02',
    '2026-05-01Z',
    '2026-05-01T1:00:00Z',
    'May 1, 2026',
    'yesterday',
    '1714560000000',
    '２０２６-05-01',
    '2026-05-01\n',
  ])('refuses the spelling %j', (value) => {
    expect(refusal(value)).toBe('must be an ISO 8601 date such as 2026-05-01 or a timestamp with a time zone such as 2026-05-01T12:00:00Z');
  });

  it.each([[1714560000000], [null], [undefined], [['2026-05-01']], [{}], [true]])('refuses %j, which is not a string', (value) => {
    expect(refusal(value)).toContain('must be an ISO 8601 date');
  });

  it('names the parameter it was given', () => {
    expect(parseInstant('2026-02-30', 'to')).toMatchObject({ ok: false, issue: { path: 'to' } });
  });
});

describe('VERSION_NUMBER_MAX', () => {
  it('is the bound the API publishes and the integer column versions are stored in', () => {
    expect(VERSION_NUMBER_MAX).toBe(MAX_DECISION_VERSION);
    expect(VERSION_NUMBER_MAX).toBe(INT4_MAX);
  });
});

describe('parseVersionText', () => {
  it.each([
    ['1', 1],
    ['9', 9],
    ['10', 10],
    ['120', 120],
    ['2147483647', VERSION_NUMBER_MAX],
  ])('reads %s', (value, expected) => {
    expect(parseVersionText(value, 'version')).toEqual({ ok: true, value: expected });
  });

  it.each([
    '0',
    '00',
    '01',
    '007',
    '-1',
    '+1',
    ' 1',
    '1 ',
    '1.0',
    '1.',
    '1e0',
    '1E2',
    '0x1',
    '1_000',
    '١',
    '',
    '2147483648',
    '9999999999',
    '10000000000',
    'one',
    'Infinity',
    'NaN',
  ])('refuses %j', (value) => {
    const parsed = parseVersionText(value, 'version');
    expect(parsed).toEqual({
      ok: false,
      issue: {
        path: 'version',
        message: 'must be a version number: a whole number from 1 to 2147483647, written in digits without sign, leading zeros or spaces',
      },
    });
  });

  it.each([[1], [null], [undefined], [['1']], [['1', '2']], [{}]])('refuses %j, which is not one string', (value) => {
    expect(parseVersionText(value, 'to')).toMatchObject({ ok: false, issue: { path: 'to' } });
  });
});

describe('parseVersionNumber', () => {
  it.each([[1], [2], [1.0], [VERSION_NUMBER_MAX]])('reads %p', (value) => {
    expect(parseVersionNumber(value, 'version')).toEqual({ ok: true, value });
  });

  it.each([[0], [-1], [1.5], [VERSION_NUMBER_MAX + 1], [Number.MAX_SAFE_INTEGER], [1e300], [Infinity], [NaN], [null], [true], [[1]], [{}]])(
    'refuses %p',
    (value) => {
      expect(parseVersionNumber(value, 'version')).toEqual({
        ok: false,
        issue: { path: 'version', message: 'must be a version number: a whole number from 1 to 2147483647' },
      });
    },
  );

  it.each([['1'], ['01'], [''], ['2']])('refuses the string %j and says to send a JSON number', (value) => {
    expect(parseVersionNumber(value, 'version')).toEqual({
      ok: false,
      issue: { path: 'version', message: 'must be a version number: a whole number from 1 to 2147483647, as a JSON number (1, not "1")' },
    });
  });
});
