import { randomBytes } from 'node:crypto';
import { Keyring, keyForId, openWithKeyring, parseKeyring, sealWithKeyring, singleKeyring } from './keyring';
import { rowAad, sealingKeyFingerprint } from './sealing';

describe('keyrings (id:base64,… with the first key sealing)', () => {
  const aad = rowAad('provider_credentials', 'ws-1', 'openai');
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  function ring(raw: string): Keyring {
    const parsed = parseKeyring(raw);
    if ('problem' in parsed) throw new Error(parsed.problem);
    return parsed;
  }

  it('seal under the first key and open under any key of the ring', () => {
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

  it('keep opening values sealed by a bare key, named by its fingerprint, once that key gets an id', () => {
    const bare = ring(oldKey.toString('base64'));
    expect(bare.primaryId).toBe(sealingKeyFingerprint(oldKey));
    expect(singleKeyring(oldKey)).toEqual(bare);
    const legacy = sealWithKeyring(bare, 'sk-legacy-1234', aad);
    const named = ring(`new:${newKey.toString('base64')},old:${oldKey.toString('base64')}`);
    expect(openWithKeyring(named, legacy.keyId, legacy.sealed, aad)).toBe('sk-legacy-1234');
    expect(keyForId(named, 'missing')).toBeNull();
    expect(openWithKeyring(named, 'missing', legacy.sealed, aad)).toBeNull();
  });

  it('refuse malformed rings with a reason that names no key material', () => {
    const good = oldKey.toString('base64');
    const cases: Array<[string, string]> = [
      ['', 'empty entry'],
      [`a:${good},`, 'empty entry'],
      [`a:${randomBytes(16).toString('base64')}`, '32 bytes'],
      [`a b:${good}`, 'key id'],
      [`:${good}`, 'key id'],
      [`${'x'.repeat(65)}:${good}`, 'key id'],
      [`a:${good},a:${newKey.toString('base64')}`, 'twice'],
    ];
    for (const [raw, reason] of cases) {
      const parsed = parseKeyring(raw);
      expect('problem' in parsed && parsed.problem).toContain(reason);
      expect(JSON.stringify(parsed)).not.toContain(good);
    }
  });
});
