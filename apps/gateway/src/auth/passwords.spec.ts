import { DEFAULT_SCRYPT_N } from '../config';
import { PasswordHasher } from './passwords';

describe('passwords', () => {
  const hasher = new PasswordHasher(16_384);

  it('verifies the right password only, with the cost stored beside the hash', async () => {
    const stored = await hasher.hash('correct horse 42');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    await expect(hasher.verify('correct horse 42', stored)).resolves.toBe(true);
    await expect(hasher.verify('correct horse 43', stored)).resolves.toBe(false);
  });

  it('hashes and verifies at OWASP’s minimum cost, which needs more than scrypt’s default memory ceiling', async () => {
    const owasp = new PasswordHasher(DEFAULT_SCRYPT_N);
    expect(owasp.cost).toEqual({ N: 131_072, r: 8, p: 1 });
    const stored = await owasp.hash('correct horse 42');
    expect(stored.startsWith('scrypt$131072$8$1$')).toBe(true);
    await expect(owasp.verify('correct horse 42', stored)).resolves.toBe(true);
  });

  it('verifies a hash made at another cost with the cost it was made with', async () => {
    const stored = await new PasswordHasher(32_768).hash('correct horse 42');
    await expect(hasher.verify('correct horse 42', stored)).resolves.toBe(true);
  });

  it.each([
    '',
    'bcrypt$x',
    'scrypt$16384$8$1$c2FsdA==',
    'scrypt$1000$8$1$c2FsdA==$aGFzaA==',
    'scrypt$16384$99$1$c2FsdA==$aGFzaA==',
    'scrypt$16384$8$1$c2FsdA==$',
  ])('refuses the malformed stored hash %p without computing it', async (stored) => {
    await expect(hasher.verify('correct horse 42', stored)).resolves.toBe(false);
  });

  it('answers false for the dummy verification that stands in for an unknown account', async () => {
    await expect(hasher.verifyNothing('correct horse 42')).resolves.toBe(false);
  });

  it('asks for a rehash only when a stored parameter is below the current cost', async () => {
    const current = new PasswordHasher(32_768);
    expect(current.needsRehash('scrypt$16384$8$1$c2FsdA==$aGFzaA==')).toBe(true);
    expect(current.needsRehash('scrypt$32768$4$1$c2FsdA==$aGFzaA==')).toBe(true);
    expect(current.needsRehash('scrypt$32768$8$1$c2FsdA==$aGFzaA==')).toBe(false);
    expect(current.needsRehash('scrypt$65536$8$1$c2FsdA==$aGFzaA==')).toBe(false);
    expect(current.needsRehash('scrypt$32768$8$2$c2FsdA==$aGFzaA==')).toBe(false);
    expect(current.needsRehash('not a hash')).toBe(true);
    expect(current.needsRehash(await current.hash('correct horse 42'))).toBe(false);
  });
});
