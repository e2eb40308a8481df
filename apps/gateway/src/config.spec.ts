import { EnvReader } from '@ds/platform';
import { readGatewayConfig } from './config';

function read(env: NodeJS.ProcessEnv) {
  const reader = new EnvReader(env);
  const config = readGatewayConfig(reader);
  reader.done();
  return config;
}

describe('gateway configuration', () => {
  it('defaults to OWASP’s scrypt cost, generous per-address ceilings and private proxies only', () => {
    const config = read({});
    expect(config.passwordScryptN).toBe(131_072);
    expect(config.apiKeyCacheMax).toBe(10_000);
    expect(config.rateLimitKeyPrefix).toBe('ds');
    expect(config.trustedProxies).toEqual(['loopback', 'linklocal', 'uniquelocal']);
    expect(config.credentialLimits).toEqual({
      addressWindowSeconds: 600,
      authFailuresPerAddress: 20_000,
      signUpsPerAddress: 2_000,
      signInsPerAddress: 2_000,
      operatorRequestsPerAddress: 6_000,
      attemptsPerAccount: 60,
    });
    expect(config.sessionPace).toEqual({ perSecond: 20, burst: 500, maxWaitMs: 5_000 });
  });

  it('reads a session’s pace from the environment, and refuses a pace of zero', () => {
    expect(read({ APP_REQUESTS_PER_SECOND: '5', APP_REQUEST_BURST: '1' }).sessionPace).toEqual({ perSecond: 5, burst: 1, maxWaitMs: 5_000 });
    expect(() => read({ APP_REQUESTS_PER_SECOND: '0' })).toThrow(/APP_REQUESTS_PER_SECOND/);
    expect(() => read({ APP_REQUEST_BURST: '0' })).toThrow(/APP_REQUEST_BURST/);
  });

  it('reads every ceiling and the proxies from the environment', () => {
    const config = read({ PASSWORD_SCRYPT_N: '16384', SIGN_UPS_PER_ADDRESS: '3', TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8::1, loopback' });
    expect(config.passwordScryptN).toBe(16_384);
    expect(config.credentialLimits.signUpsPerAddress).toBe(3);
    expect(config.trustedProxies).toEqual(['10.0.0.0/8', '2001:db8::1', 'loopback']);
  });

  it.each([
    [{ PASSWORD_SCRYPT_N: '8192' }, /PASSWORD_SCRYPT_N must be an integer from 16384/],
    [{ PASSWORD_SCRYPT_N: '100000' }, /PASSWORD_SCRYPT_N must be a power of two/],
    [{ TRUSTED_PROXIES: '*' }, /TRUSTED_PROXIES must list .* \(got \*\)/],
    [{ TRUSTED_PROXIES: '10.0.0.0/33' }, /got 10\.0\.0\.0\/33/],
    [{ RATE_LIMIT_KEY_PREFIX: 'a b' }, /RATE_LIMIT_KEY_PREFIX must be/],
    [{ AUTH_FAILURES_PER_ADDRESS: '0' }, /AUTH_FAILURES_PER_ADDRESS must be an integer/],
  ])('refuses %p in one line', (env, message) => {
    expect(() => read(env)).toThrow(message);
  });
});
