import { randomBytes } from 'node:crypto';
import {
  credentialAad,
  credentialsKeyId,
  DEV_CREDENTIALS_KEY,
  isProvider,
  lastFour,
  openCredential,
  parseCredentialsKey,
  providerKeyProblem,
  sealCredential,
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
      altered[index] ^= 1;
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
