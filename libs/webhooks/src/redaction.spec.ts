import { randomBytes } from 'node:crypto';
import { encodedForms, REDACTED, redactSecrets, secretRedactor } from './redaction';

const SECRET = 'crm/Tok+en/7Hq2 Zp9xW';
const R = REDACTED;

/** What is left of the text once every marker is taken out: it must hold nothing of the secret. */
function leftOver(text: string): string {
  return text.split(R).join('\u0000');
}

/** Every run of 8 characters of `value`, to show none of them survived. */
function runsOf(value: string): string[] {
  return Array.from({ length: value.length - 7 }, (_, i) => value.slice(i, i + 8).toLowerCase());
}

function expectNoRunOf(value: string, text: string): void {
  const lowered = leftOver(text).toLowerCase();
  for (const run of runsOf(value)) expect(lowered).not.toContain(run);
}

describe('redactSecrets', () => {
  it('replaces the secret as sent, every time it appears, and keeps the rest of the text exactly', () => {
    expect(redactSecrets(`{"auth":"Bearer ${SECRET}","again":"${SECRET}","ok":true}`, [SECRET])).toBe(`{"auth":"Bearer ${R}","again":"${R}","ok":true}`);
  });

  it('leaves a text without secrets, or with no secret to look for, as it is', () => {
    expect(redactSecrets('{"ok":true,"note":"nothing secret here"}', [SECRET])).toBe('{"ok":true,"note":"nothing secret here"}');
    expect(redactSecrets(`has ${SECRET}`, [])).toBe(`has ${SECRET}`);
    expect(redactSecrets('', [SECRET])).toBe('');
  });

  it('finds it in any letter case', () => {
    for (const spelled of [SECRET.toUpperCase(), SECRET.toLowerCase(), 'CrM/tOk+En/7hQ2 zP9Xw']) {
      expect(redactSecrets(`echo: ${spelled}.`, [SECRET])).toBe(`echo: ${R}.`);
    }
  });

  it('finds it JSON-escaped: \\/ for a slash, escaped quotes and backslashes', () => {
    expect(redactSecrets(`{"echo":"${SECRET.replace(/\//g, '\\/')}"}`, [SECRET])).toBe(`{"echo":"${R}"}`);
    const awkward = 'a"quote\\and/slash-9x';
    expect(redactSecrets(`{"echo":${JSON.stringify(awkward)}}`, [awkward])).toBe(`{"echo":"${R}"}`);
    expect(redactSecrets(JSON.stringify(JSON.stringify({ token: SECRET })), [SECRET])).toBe(`"{\\"token\\":\\"${R}\\"}"`);
  });

  it('finds it in \\u escapes, all of them or any mix with literal characters, in either case of hex', () => {
    const escaped = (value: string, which: (index: number) => boolean, upper = false) =>
      [...value]
        .map((char, index) => {
          const hex = char.charCodeAt(0).toString(16).padStart(4, '0');
          return which(index) ? `\\u${upper ? hex.toUpperCase() : hex}` : char;
        })
        .join('');
    const allEscaped = escaped(SECRET, () => true);
    expect(redactSecrets(`{"echo":"${allEscaped}"}`, [SECRET])).toBe(`{"echo":"${R}"}`);
    expect(redactSecrets(`{"echo":"${escaped(SECRET, () => true, true)}"}`, [SECRET])).toBe(`{"echo":"${R}"}`);
    expect(redactSecrets(`{"echo":"${escaped(SECRET, (index) => index % 2 === 0)}"}`, [SECRET])).toBe(`{"echo":"${R}"}`);
    expect(redactSecrets(`{"echo":"${escaped(SECRET, (index) => index % 3 === 1, true)}"}`, [SECRET])).toBe(`{"echo":"${R}"}`);
  });

  it('finds it URL-encoded: %2F in either case, + or %20 for a space, and a form body', () => {
    const encoded = encodeURIComponent(SECRET);
    expect(encoded).toContain('%2F');
    expect(redactSecrets(`token=${encoded}&ok=1`, [SECRET])).toBe(`token=${R}&ok=1`);
    expect(redactSecrets(`token=${encoded.toLowerCase()}&ok=1`, [SECRET])).toBe(`token=${R}&ok=1`);
    expect(redactSecrets(`token=${encoded.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}&ok=1`, [SECRET])).toBe(`token=${R}&ok=1`);
    const form = new URLSearchParams({ token: SECRET, other: 'kept' }).toString();
    expect(form).toContain('+');
    expect(redactSecrets(form, [SECRET])).toBe(`token=${R}&other=kept`);
    const everyCharacter = [...Buffer.from(SECRET)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    expect(redactSecrets(`x=${everyCharacter}`, [SECRET])).toBe(`x=${R}`);
  });

  it('finds a secret beyond ASCII in UTF-8 URL escapes and in \\u escapes, surrogate pairs included', () => {
    const secret = 'clé-✓-sécrète-😀-fin';
    expect(redactSecrets(`q=${encodeURIComponent(secret)}`, [secret])).toBe(`q=${R}`);
    expect(
      redactSecrets(`{"q":${JSON.stringify(secret).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}}`, [secret]),
    ).toBe(`{"q":"${R}"}`);
    expect(redactSecrets(`as is: ${secret}!`, [secret])).toBe(`as is: ${R}!`);
  });

  it('finds it in base64 and base64url, padded or not, on its own', () => {
    const bytes = Buffer.from(SECRET);
    for (const encoded of [bytes.toString('base64'), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')]) {
      const redacted = redactSecrets(`{"echo":"${encoded}"}`, [SECRET]);
      expect(redacted).toContain(R);
      expect(redacted).not.toContain(encoded.slice(0, 8));
      expect(redacted.length).toBeLessThan(`{"echo":"${R}"}`.length + 4);
    }
  });

  it('finds it inside a longer base64 text at each of the three alignments, and keeps the rest of that text', () => {
    for (const before of [0, 1, 2, 3, 4, 5]) {
      const prefix = randomBytes(30 + before);
      const suffix = randomBytes(31);
      for (const [, text] of [
        ['base64', Buffer.concat([prefix, Buffer.from(SECRET), suffix]).toString('base64')],
        ['base64url', Buffer.concat([prefix, Buffer.from(SECRET), suffix]).toString('base64url')],
      ] as const) {
        const redacted = redactSecrets(text, [SECRET]);
        expect(redacted).toContain(R);
        // The other bytes' characters stay (but the one or two that share bits with the secret's).
        expect(redacted.startsWith(text.slice(0, 36))).toBe(true);
        expect(redacted.endsWith(text.slice(-36))).toBe(true);
        expect(redacted.length).toBeLessThan(text.length - 15);
        for (const form of encodedForms(SECRET).filter((f) => !/^[0-9a-f]+$/.test(f))) expectNoRunOf(form, redacted);
      }
    }
  });

  it('finds base64 that a JSON encoder escaped (\\/) or a URL encoder escaped (%2B, %2F)', () => {
    const secret = '\u00ff\u00ff\u00ffzz\u00fe\u00fe\u00fe-secret-value';
    const encoded = Buffer.from(secret).toString('base64');
    expect(encoded).toMatch(/[+/]/);
    expect(redactSecrets(`{"b":"${encoded.replace(/\//g, '\\/')}"}`, [secret])).toMatch(new RegExp(`^\\{"b":"${escapeRe(R)}.{0,3}"\\}$`));
    expect(redactSecrets(`b=${encodeURIComponent(encoded)}`, [secret])).toMatch(new RegExp(`^b=${escapeRe(R)}.{0,9}$`));
  });

  it('finds it in hex, either case', () => {
    const hex = Buffer.from(SECRET).toString('hex');
    expect(redactSecrets(`digest ${hex} end`, [SECRET])).toBe(`digest ${R} end`);
    expect(redactSecrets(`digest ${hex.toUpperCase()} end`, [SECRET])).toBe(`digest ${R} end`);
  });

  it('redacts any run of 8 or more of its characters, so halves are caught, and leaves a run of 7', () => {
    const secret = 'A1b2C3d4E5f6G7h8I9j0';
    const [first, second] = [secret.slice(0, 10), secret.slice(10)];
    expect(redactSecrets(`first=${first}; second=${second}.`, [secret])).toBe(`first=${R}; second=${R}.`);
    expect(redactSecrets(`middle ${secret.slice(5, 13)} here`, [secret])).toBe(`middle ${R} here`);
    expect(redactSecrets(`seven ${secret.slice(5, 12)} here`, [secret])).toBe(`seven ${secret.slice(5, 12)} here`);
    // A half in another encoding is a run too.
    expect(redactSecrets(`{"h":"${Buffer.from(first).toString('base64')}"}`, [secret])).not.toContain(Buffer.from(first).toString('base64').slice(0, 8));
    expect(redactSecrets(`h=${encodeURIComponent(SECRET.slice(0, 9))}`, [SECRET])).toBe(`h=${R}`);
  });

  it('redacts a run that starts inside other text, and merges touching occurrences into one marker', () => {
    const secret = 'A1b2C3d4E5f6G7h8I9j0';
    expect(redactSecrets(`xx${secret}${secret}yy`, [secret])).toBe(`xx${R}yy`);
    // Only the characters that are the secret's go: the 7-letter overlap before it is kept.
    expect(redactSecrets(`zzzA1b2C3d4E5zzz`, [secret])).toBe(`zzz${R}zzz`);
  });

  it('redacts a secret of 4 to 7 characters only whole, and ignores one shorter than 4', () => {
    expect(redactSecrets('pin=Ab12cd; part=Ab12c; again=AB12CD', ['Ab12cd'])).toBe(`pin=${R}; part=Ab12c; again=${R}`);
    expect(redactSecrets('a b ab abc', ['ab', 'abc'])).toBe('a b ab abc');
    expect(redactSecrets(`p=${encodeURIComponent('a/b+c')}`, ['a/b+c'])).toBe(`p=${R}`);
    expect(redactSecrets(`b=${Buffer.from('Ab12cd').toString('base64')}; h=${Buffer.from('Ab12cd').toString('hex')}`, ['Ab12cd'])).toBe(`b=${R}; h=${R}`);
    expect(redactSecrets('aaaa aaaaa1 aaaaa1aaaaa1', ['aaaaa1'])).toBe(`aaaa ${R} ${R}`);
  });

  it('keeps a non-secret that merely looks like one: other tokens, short shared pieces', () => {
    const body = '{"id":"evt_123","token":"crm/Tok-zz","status":"ok","echo":"7Hq2 Zp"}';
    expect(redactSecrets(body, [SECRET])).toBe(body);
  });

  it('redacts several secrets at once, each in its own spelling', () => {
    const signing = 'whsec_' + randomBytes(32).toString('base64');
    const signature = randomBytes(32).toString('hex');
    const text = `a=${encodeURIComponent(signing)} b=${signature.toUpperCase()} c=${Buffer.from(SECRET).toString('base64url')}`;
    const redacted = redactSecrets(text, [signing, signature, SECRET]);
    expect(redacted).toMatch(new RegExp(`^a=${escapeRe(R)} b=${escapeRe(R)} c=${escapeRe(R)}.{0,2}$`));
  });

  it('never cuts a surrogate pair in two', () => {
    const secret = '😀😀😀😀😀';
    expect(redactSecrets(`x😀${secret}😀x`, [secret])).toBe(`x${R}x`);
    const redacted = redactSecrets(`x${secret.slice(0, 9)}y`, [secret]);
    expect(redacted).toBe(`x${R}y`);
  });

  it('compiles once and applies to many texts', () => {
    const redact = secretRedactor([SECRET]);
    expect(redact(SECRET)).toBe(R);
    expect(redact(`text/plain; token=${SECRET}`)).toBe(`text/plain; token=${R}`);
    expect(redact('application/json')).toBe('application/json');
  });

  it('leaves nothing of the secret in a body that echoes it in every spelling at once', () => {
    const bytes = Buffer.from(SECRET);
    const body = JSON.stringify({
      plain: SECRET,
      upper: SECRET.toUpperCase(),
      url: encodeURIComponent(SECRET),
      base64: bytes.toString('base64'),
      base64url: bytes.toString('base64url'),
      hex: bytes.toString('hex'),
      halves: [SECRET.slice(0, 10), SECRET.slice(10)],
    })
      .replace(/\//g, '\\/')
      .concat(`\n{"u":"${[...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`);
    const redacted = redactSecrets(body, [SECRET]);
    expectNoRunOf(SECRET, redacted);
    expect(redacted).not.toContain(encodeURIComponent(SECRET).slice(0, 8));
    for (const form of encodedForms(SECRET)) expectNoRunOf(form, redacted);
    expect(redacted).toContain('"plain":"[redacted]"');
  });
});

function escapeRe(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
