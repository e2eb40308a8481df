import { ConfigError, EnvReader, readBaseConfig, redact } from './config';

/** The one line `done()` throws, or null when the reader found nothing wrong. */
function problemsOf(env: EnvReader): string | null {
  try {
    env.done();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
}

describe('EnvReader', () => {
  describe('string', () => {
    it('reads the value, or the fallback when the variable is unset or empty', () => {
      const env = new EnvReader({ NAME: 'value', EMPTY: '' });
      expect(env.string('NAME', 'fallback')).toBe('value');
      expect(env.string('EMPTY', 'fallback')).toBe('fallback');
      expect(env.string('UNSET', 'fallback')).toBe('fallback');
      expect(env.string('UNSET')).toBeUndefined();
      expect(problemsOf(env)).toBeNull();
    });
  });

  describe('int', () => {
    it.each([
      ['0', 0],
      ['65535', 65535],
      ['8080', 8080],
    ])('accepts %s inside the range', (raw, value) => {
      const env = new EnvReader({ PORT: raw });
      expect(env.int('PORT', 3000, 0, 65535)).toBe(value);
      expect(problemsOf(env)).toBeNull();
    });

    it('falls back when unset or empty', () => {
      const env = new EnvReader({ EMPTY: '' });
      expect(env.int('UNSET', 3000, 0, 65535)).toBe(3000);
      expect(env.int('EMPTY', 3000, 0, 65535)).toBe(3000);
      expect(problemsOf(env)).toBeNull();
    });

    it.each(['-1', '65536', '1.5', 'abc', '80 ports'])('refuses %s, naming the variable and the range', (raw) => {
      const env = new EnvReader({ PORT: raw });
      expect(env.int('PORT', 3000, 0, 65535)).toBe(3000);
      expect(problemsOf(env)).toBe(`invalid configuration: PORT must be an integer from 0 to 65535 (got ${raw})`);
    });
  });

  describe('number', () => {
    it('accepts a finite number inside the range, fractions included', () => {
      const env = new EnvReader({ SCALE: '0.0002' });
      expect(env.number('SCALE', 1, 0, 1000)).toBe(0.0002);
      expect(problemsOf(env)).toBeNull();
    });

    it.each(['-0.5', '1001', 'Infinity', 'NaN', 'fast'])('refuses %s, naming the variable and the range', (raw) => {
      const env = new EnvReader({ SCALE: raw });
      expect(env.number('SCALE', 1, 0, 1000)).toBe(1);
      expect(problemsOf(env)).toBe(`invalid configuration: SCALE must be a number from 0 to 1000 (got ${raw})`);
    });
  });

  describe('bool', () => {
    it.each(['true', 'TRUE', '1', 'yes', 'Yes'])('reads %s as true', (raw) => {
      const env = new EnvReader({ FLAG: raw });
      expect(env.bool('FLAG', false)).toBe(true);
      expect(problemsOf(env)).toBeNull();
    });

    it.each(['false', 'False', '0', 'no', 'NO'])('reads %s as false', (raw) => {
      const env = new EnvReader({ FLAG: raw });
      expect(env.bool('FLAG', true)).toBe(false);
      expect(problemsOf(env)).toBeNull();
    });

    it('falls back when unset', () => {
      expect(new EnvReader({}).bool('FLAG', true)).toBe(true);
    });

    it.each(['on', 'off', 'y', '2', 'truthy'])('refuses %s, naming the variable', (raw) => {
      const env = new EnvReader({ FLAG: raw });
      expect(env.bool('FLAG', true)).toBe(true);
      expect(problemsOf(env)).toBe(`invalid configuration: FLAG must be true or false (got ${raw})`);
    });
  });

  describe('url', () => {
    it.each([
      ['nats://nats:4222', ['nats', 'tls']],
      ['tls://nats.internal:4222', ['nats', 'tls']],
      ['nats://a:4222, nats://b:4222', ['nats', 'tls']],
      ['postgresql://user:secret@db:5432/ds', ['postgres', 'postgresql']],
    ])('accepts %s with an allowed scheme', (raw, protocols) => {
      const env = new EnvReader({ SERVER_URL: raw });
      expect(env.url('SERVER_URL', 'nats://127.0.0.1:4222', protocols)).toBe(raw);
      expect(problemsOf(env)).toBeNull();
    });

    it('falls back when unset, and answers undefined without a fallback', () => {
      const env = new EnvReader({});
      expect(env.url('SERVER_URL', 'nats://127.0.0.1:4222', ['nats'])).toBe('nats://127.0.0.1:4222');
      expect(env.url('SERVER_URL', undefined, ['http'])).toBeUndefined();
      expect(problemsOf(env)).toBeNull();
    });

    it('refuses another scheme, naming the variable and the allowed schemes', () => {
      const env = new EnvReader({ NATS_URL: 'http://nats:4222' });
      env.url('NATS_URL', 'nats://127.0.0.1:4222', ['nats', 'tls']);
      expect(problemsOf(env)).toBe('invalid configuration: NATS_URL must use nats or tls:// (got http://nats:4222)');
    });

    it('checks every address of a comma-separated list', () => {
      const env = new EnvReader({ NATS_URL: 'nats://a:4222,http://b:4222' });
      env.url('NATS_URL', 'nats://127.0.0.1:4222', ['nats']);
      expect(problemsOf(env)).toBe('invalid configuration: NATS_URL must use nats:// (got nats://a:4222,http://b:4222)');
    });

    it('refuses what is not a URL, naming the variable', () => {
      const env = new EnvReader({ DATABASE_URL: 'db:5432' });
      env.url('DATABASE_URL', 'postgres://127.0.0.1/postgres', ['postgres']);
      expect(problemsOf(env)).toBe('invalid configuration: DATABASE_URL must use postgres:// (got db:5432)');
      const garbage = new EnvReader({ DATABASE_URL: 'not a url' });
      garbage.url('DATABASE_URL', 'postgres://127.0.0.1/postgres', ['postgres']);
      expect(problemsOf(garbage)).toBe('invalid configuration: DATABASE_URL is not a URL (not a url)');
    });

    it('refuses a URL without a host', () => {
      const env = new EnvReader({ DATABASE_URL: 'postgres:///ds' });
      env.url('DATABASE_URL', 'postgres://127.0.0.1/postgres', ['postgres']);
      expect(problemsOf(env)).toBe('invalid configuration: DATABASE_URL has no host (postgres:///ds)');
    });

    it('never repeats a password in its message', () => {
      const env = new EnvReader({ DATABASE_URL: 'mysql://ds:hunter2@db/ds' });
      env.url('DATABASE_URL', 'postgres://127.0.0.1/postgres', ['postgres']);
      expect(problemsOf(env)).toBe('invalid configuration: DATABASE_URL must use postgres:// (got mysql://ds:***@db/ds)');
    });
  });

  describe('oneOf', () => {
    const LEVELS = ['info', 'debug'] as const;

    it('accepts an allowed word and falls back when unset', () => {
      const env = new EnvReader({ LOG_LEVEL: 'debug' });
      expect(env.oneOf('LOG_LEVEL', 'info', LEVELS)).toBe('debug');
      expect(env.oneOf('UNSET', 'info', LEVELS)).toBe('info');
      expect(env.oneOf('UNSET', undefined, LEVELS)).toBeUndefined();
      expect(problemsOf(env)).toBeNull();
    });

    it.each(['DEBUG', 'verbose', ' info'])('refuses %j, naming the variable and the allowed words', (raw) => {
      const env = new EnvReader({ LOG_LEVEL: raw });
      expect(env.oneOf('LOG_LEVEL', 'info', LEVELS)).toBe('info');
      expect(problemsOf(env)).toBe(`invalid configuration: LOG_LEVEL must be one of info, debug (got ${raw})`);
    });
  });

  it('names every problem in one line, in the order they were read, with those of fail()', () => {
    const env = new EnvReader({ OPS_PORT: '99999', MIGRATIONS_RUN: 'maybe', LOG_LEVEL: 'loud' });
    env.int('OPS_PORT', 9400, 0, 65535);
    env.bool('MIGRATIONS_RUN', true);
    env.oneOf('LOG_LEVEL', 'info', ['info', 'debug']);
    env.fail('NATS_USER', 'and NATS_PASSWORD must be set together');
    expect(problemsOf(env)).toBe(
      'invalid configuration: OPS_PORT must be an integer from 0 to 65535 (got 99999); MIGRATIONS_RUN must be true or false (got maybe); ' +
        'LOG_LEVEL must be one of info, debug (got loud); NATS_USER and NATS_PASSWORD must be set together',
    );
  });
});

describe('readBaseConfig', () => {
  it('gives every service its defaults from an empty environment', () => {
    const env = new EnvReader({});
    expect(readBaseConfig('decision-runner', env)).toMatchObject({
      natsUrl: 'nats://127.0.0.1:4222',
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
      opsPort: 9401,
      opsHost: '0.0.0.0',
      shutdownGraceMs: 65_000,
      shutdownDelayMs: 0,
      runMigrations: true,
      databasePoolSize: 10,
      natsAuth: { user: null, password: null, tls: null },
      otlpEndpoint: undefined,
    });
    expect(problemsOf(env)).toBeNull();
  });

  it('takes a delay before the drain of up to a minute, and refuses a longer one', () => {
    expect(readBaseConfig('gateway', new EnvReader({ SHUTDOWN_DELAY_MS: '2000' })).shutdownDelayMs).toBe(2000);
    const env = new EnvReader({ SHUTDOWN_DELAY_MS: '120000' });
    readBaseConfig('gateway', env);
    expect(problemsOf(env)).toBe('invalid configuration: SHUTDOWN_DELAY_MS must be an integer from 0 to 60000 (got 120000)');
  });

  it('refuses a NATS user without its password, and a client certificate without its key', () => {
    const env = new EnvReader({ NATS_USER: 'runner', NATS_TLS_CERT_FILE: '/tls/cert.pem' });
    readBaseConfig('decision-runner', env);
    expect(problemsOf(env)).toBe(
      'invalid configuration: NATS_USER and NATS_PASSWORD must be set together; NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE must be set together',
    );
  });
});

describe('OPS_HOST', () => {
  it.each(['127.0.0.1', '::1', '0.0.0.0', 'localhost'])('takes %s', (host) => {
    const env = new EnvReader({ OPS_HOST: host });
    expect(readBaseConfig('gateway', env).opsHost).toBe(host);
    expect(problemsOf(env)).toBeNull();
  });

  it.each(['ops.internal', '127.0.0.1:9400', '256.1.1.1'])('refuses %s, naming the variable', (host) => {
    const env = new EnvReader({ OPS_HOST: host });
    readBaseConfig('gateway', env);
    expect(problemsOf(env)).toBe(`invalid configuration: OPS_HOST must be an IP address such as 127.0.0.1 or 0.0.0.0, or localhost (got ${host})`);
  });
});

describe('redact', () => {
  it('hides the password of every URL in a list and leaves the rest', () => {
    expect(redact('nats://u:p@a:4222,nats://v:q@b:4222')).toBe('nats://u:***@a:4222,nats://v:***@b:4222');
    expect(redact('postgres://postgres@db:5432/ds')).toBe('postgres://postgres@db:5432/ds');
  });
});
