import { createHash, randomBytes } from 'node:crypto';
import { openValue, sealingKeyFingerprint, sealValue } from '@ds/sealing';
import { credentialAad, DEV_CREDENTIALS_KEY, isProvider, lastFour } from './credentials';

describe('provider keys at rest', () => {
  it('are bound to their workspace and provider', () => {
    const key = randomBytes(32);
    const sealed = sealValue(key, 'sk-proj-abcdef123456', credentialAad('ws-1', 'openai'));
    expect(openValue(key, sealed, credentialAad('ws-1', 'openai'))).toBe('sk-proj-abcdef123456');
    expect(openValue(key, sealed, credentialAad('ws-2', 'openai'))).toBeNull();
    expect(openValue(key, sealed, credentialAad('ws-1', 'anthropic'))).toBeNull();
  });

  it('keep the additional data and development key they were first sealed with', () => {
    // Rows saved before the sealing code moved to @ds/sealing were sealed with exactly these.
    expect(credentialAad('ws-1', 'openai').toString()).toBe('provider_credentials:ws-1:openai');
    const publicText = 'decision-service development credentials key (not a secret)';
    expect(DEV_CREDENTIALS_KEY.equals(createHash('sha256').update(publicText).digest())).toBe(true);
    expect(sealingKeyFingerprint(DEV_CREDENTIALS_KEY)).toMatch(/^[0-9a-f]{12}$/);
  });

  it('show only the last four characters of a key and know the two providers', () => {
    expect(lastFour('sk-ant-api03-XYZW')).toBe('XYZW');
    expect(isProvider('openai')).toBe(true);
    expect(isProvider('azure')).toBe(false);
  });
});
