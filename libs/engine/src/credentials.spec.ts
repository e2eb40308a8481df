import { randomBytes } from 'node:crypto';
import {
  CredentialsKeyring,
  credentialAad,
  credentialsKeyId,
  DEV_CREDENTIALS_KEY,
  isProvider,
  keyForId,
  lastFour,
  openCredential,
  openWithKeyring,
  parseCredentialsKey,
  parseCredentialsKeyring,
  providerKeyProblem,
  sealCredential,
  sealWithKeyring,
  singleKeyring,
} from './credentials';

describe('provider keys at rest', () => {
  const key = randomBytes(32);
  const aad = credentialAad('ws-1', 'openai');

  it('seal and open round trip, with a fresh IV every time', () => {
    const a = sealCredential(key, 'sk-proj-abcdef123456', aad);
    const b = sealCredential(key, 'sk-proj-abcdef123456', aad);
    expect(a.equals(b)).toBe(false);
    expect(a.toString('utf8')).not.toContain('abcdef');
    expect(openCredential(key, a, aad)).toBe('sk-proj-abcdef123456');
    expect(openCredential(key, b, aad)).toBe('sk-proj-abcdef123456');
  });

  it('refuse another key, another row, and any altered byte', () => {
    const sealed = sealCredential(key, 'sk-proj-abcdef123456', aad);
    expect(openCredential(randomBytes(32), sealed, aad)).toBeNull();
    expect(openCredential(key, sealed, credentialAad('ws-2', 'openai'))).toBeNull();
    expect(openCredential(key, sealed, credentialAad('ws-1', 'anthropic'))).toBeNull();
    for (const index of [0, 13, sealed.length - 1]) {
      const altered = Buffer.from(sealed);
      altered.writeUInt8(altered.readUInt8(index) ^ 1, index);
      expect(openCredential(key, altered, aad)).toBeNull();
    }
    expect(openCredential(key, sealed.subarray(0, 20), aad)).toBeNull();
  });

  it('read ENGINE_CREDENTIALS_KEY as exactly 32 bytes of base64', () => {
    const raw = randomBytes(32);
    expect(parseCredentialsKey(raw.toString('base64'))?.equals(raw)).toBe(true);
    expect(parseCredentialsKey(randomBytes(16).toString('base64'))).toBeNull();
    expect(parseCredentialsKey('not base64 at all!')).toBeNull();
    expect(DEV_CREDENTIALS_KEY).toHaveLength(32);
    expect(credentialsKeyId(raw)).toMatch(/^[0-9a-f]{12}$/);
    expect(credentialsKeyId(raw)).not.toBe(credentialsKeyId(DEV_CREDENTIALS_KEY));
  });

  it('accept keys of 8 to 512 printable characters and show only the last four', () => {
    expect(providerKeyProblem('a'.repeat(8))).toBeNull();
    expect(providerKeyProblem('a'.repeat(512))).toBeNull();
    expect(providerKeyProblem('a'.repeat(7))).toContain('8 to 512');
    expect(providerKeyProblem('a'.repeat(513))).toContain('8 to 512');
    expect(providerKeyProblem('sk-has space')).toContain('printable');
    expect(providerKeyProblem('sk-line\nbreak')).toContain('printable');
    expect(providerKeyProblem(12345678)).toBe('must be a string');
    expect(lastFour('sk-ant-api03-XYZW')).toBe('XYZW');
    expect(isProvider('openai')).toBe(true);
    expect(isProvider('azure')).toBe(false);
  });
});

describe('credentials keyring (ENGINE_CREDENTIALS_KEY with key ids)', () => {
  const aad = credentialAad('ws-1', 'openai');
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  function ring(raw: string): CredentialsKeyring {
    const parsed = parseCredentialsKeyring(raw);
    if ('problem' in parsed) throw new Error(parsed.problem);
    return parsed;
  }

  it('seals under the first key and opens under any key of the ring', () => {
    const before = ring(`k1:${oldKey.toString('base64')}`);
    const sealedBefore = sealWithKeyring(before, 'sk-old-123456', aad);
    expect(sealedBefore.keyId).toBe('k1');

    const rotated = ring(`k2:${newKey.toString('base64')}, k1:${oldKey.toString('base64')}`);
    expect(rotated.primaryId).toBe('k2');
    expect(openWithKeyring(rotated, 'k1', sealedBefore.sealed, aad)).toBe('sk-old-123456');
    const sealedAfter = sealWithKeyring(rotated, 'sk-new-123456', aad);
    expect(sealedAfter.keyId).toBe('k2');
    expect(openWithKeyring(rotated, 'k2', sealedAfter.sealed, aad)).toBe('sk-new-123456');
    // The id chooses the key: a value presented under the other id does not open.
    expect(openWithKeyring(rotated, 'k1', sealedAfter.sealed, aad)).toBeNull();
    expect(openWithKeyring(before, 'k2', sealedAfter.sealed, aad)).toBeNull();
  });

  it('keeps opening values sealed by a bare key, named by its fingerprint, once that key gets an id', () => {
    const bare = ring(oldKey.toString('base64'));
    expect(bare.primaryId).toBe(credentialsKeyId(oldKey));
    expect(singleKeyring(oldKey)).toEqual(bare);
    const legacy = sealWithKeyring(bare, 'sk-legacy-1234', aad);
    const named = ring(`new:${newKey.toString('base64')},old:${oldKey.toString('base64')}`);
    expect(openWithKeyring(named, legacy.keyId, legacy.sealed, aad)).toBe('sk-legacy-1234');
    expect(keyForId(named, 'missing')).toBeNull();
  });

  it('refuses malformed rings with a reason that names no key material', () => {
    const good = oldKey.toString('base64');
    const cases: Array<[string, string]> = [
      ['', 'empty entry'],
      [`a:${good},`, 'empty entry'],
      [`a:${randomBytes(16).toString('base64')}`, '32 bytes'],
      [`a b:${good}`, 'key id'],
      [`${'x'.repeat(65)}:${good}`, 'key id'],
      [`a:${good},a:${newKey.toString('base64')}`, 'twice'],
    ];
    for (const [raw, reason] of cases) {
      const parsed = parseCredentialsKeyring(raw);
      expect('problem' in parsed && parsed.problem).toContain(reason);
      expect(JSON.stringify(parsed)).not.toContain(good);
    }
  });
});
