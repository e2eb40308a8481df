import { randomBytes } from 'node:crypto';
import { developmentKey, openValue, parseSealingKey, rowAad, SEALING_KEY_BYTES, sealingKeyFingerprint, sealValue } from './sealing';

describe('values sealed at rest', () => {
  const key = randomBytes(32);
  const aad = rowAad('signing_secrets', 'ws-1', '7');

  it('seal and open round trip, with a fresh IV every time', () => {
    const a = sealValue(key, 'whsec_abcdef123456', aad);
    const b = sealValue(key, 'whsec_abcdef123456', aad);
    expect(a.equals(b)).toBe(false);
    expect(a.toString('utf8')).not.toContain('abcdef');
    expect(openValue(key, a, aad)).toBe('whsec_abcdef123456');
    expect(openValue(key, b, aad)).toBe('whsec_abcdef123456');
  });

  it('refuse another key, another row, and any altered byte', () => {
    const sealed = sealValue(key, 'whsec_abcdef123456', aad);
    expect(openValue(randomBytes(32), sealed, aad)).toBeNull();
    expect(openValue(key, sealed, rowAad('signing_secrets', 'ws-2', '7'))).toBeNull();
    expect(openValue(key, sealed, rowAad('signing_secrets', 'ws-1', '8'))).toBeNull();
    expect(openValue(key, sealed, rowAad('decision_hooks', 'ws-1', '7'))).toBeNull();
    for (const index of [0, 13, sealed.length - 1]) {
      const altered = Buffer.from(sealed);
      altered.writeUInt8(altered.readUInt8(index) ^ 1, index);
      expect(openValue(key, altered, aad)).toBeNull();
    }
    expect(openValue(key, sealed.subarray(0, 20), aad)).toBeNull();
  });

  it('join the additional data so that no two rows share it', () => {
    expect(rowAad('provider_credentials', 'ws-1', 'openai').toString()).toBe('provider_credentials:ws-1:openai');
    expect(rowAad('a', 'b').equals(rowAad('a', 'b'))).toBe(true);
    expect(rowAad('a', 'b', 'c').equals(rowAad('a', 'bc'))).toBe(false);
  });

  it('read a key as exactly 32 bytes of base64, in either alphabet', () => {
    const raw = randomBytes(32);
    expect(parseSealingKey(raw.toString('base64'))?.equals(raw)).toBe(true);
    expect(parseSealingKey(raw.toString('base64url'))?.equals(raw)).toBe(true);
    expect(parseSealingKey(randomBytes(16).toString('base64'))).toBeNull();
    expect(parseSealingKey(randomBytes(33).toString('base64'))).toBeNull();
    expect(parseSealingKey('not base64 at all!')).toBeNull();
    expect(sealingKeyFingerprint(raw)).toMatch(/^[0-9a-f]{12}$/);
  });

  it('derive one public development key per purpose, each a usable key', () => {
    const credentials = developmentKey('credentials');
    expect(credentials).toHaveLength(SEALING_KEY_BYTES);
    expect(developmentKey('credentials').equals(credentials)).toBe(true);
    expect(developmentKey('delivery secrets').equals(credentials)).toBe(false);
    expect(sealingKeyFingerprint(developmentKey('runner secrets'))).not.toBe(sealingKeyFingerprint(developmentKey('delivery secrets')));
    expect(openValue(credentials, sealValue(credentials, 'x', aad), aad)).toBe('x');
  });
});
