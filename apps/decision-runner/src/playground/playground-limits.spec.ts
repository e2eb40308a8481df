import { ServiceError } from '@ds/contracts';
import { checkPlaygroundLimits, engineCallNotMade, PLAYGROUND_RUNS_PER_DAY, PLAYGROUND_RUNS_PER_MINUTE } from './playground-limits';

function refusal(usage: Parameters<typeof checkPlaygroundLimits>[0]): ServiceError | null {
  try {
    checkPlaygroundLimits(usage);
    return null;
  } catch (error) {
    return error as ServiceError;
  }
}

describe('playground limits', () => {
  it('lets runs through below both windows', () => {
    expect(refusal({ minute: PLAYGROUND_RUNS_PER_MINUTE - 1, day: PLAYGROUND_RUNS_PER_DAY - 1, minuteResetSeconds: 3, dayResetSeconds: 5 })).toBeNull();
  });

  it('refuses the 31st run of a minute, retrying when the oldest run leaves the window', () => {
    const error = refusal({ minute: 30, day: 30, minuteResetSeconds: 12.2, dayResetSeconds: 80_000 });
    expect(error).toMatchObject({ code: 'RATE_LIMITED', status: 429, details: { retryAfter: 13 } });
  });

  it('refuses past the day, and keeps Retry-After within 1 second and the window', () => {
    expect(refusal({ minute: 0, day: 2_000, minuteResetSeconds: null, dayResetSeconds: 0.01 })).toMatchObject({ details: { retryAfter: 1 } });
    expect(refusal({ minute: 0, day: 2_000, minuteResetSeconds: null, dayResetSeconds: null })).toMatchObject({ details: { retryAfter: 86_400 } });
    expect(refusal({ minute: 30, day: 30, minuteResetSeconds: 999, dayResetSeconds: null })).toMatchObject({ details: { retryAfter: 60 } });
  });
});

describe('a place given back', () => {
  it('only when the provider was never asked', () => {
    expect(engineCallNotMade(new ServiceError('ENGINE_NOT_CONFIGURED', 'x'))).toBe(true);
    expect(engineCallNotMade(new ServiceError('ENGINE_RATE_LIMITED', 'x'))).toBe(true);
    expect(engineCallNotMade(new ServiceError('ENGINE_TIMEOUT', 'x'))).toBe(false);
    expect(engineCallNotMade(new ServiceError('ENGINE_ERROR', 'x'))).toBe(false);
    expect(engineCallNotMade(new ServiceError('SERVICE_UNAVAILABLE', 'x'))).toBe(false);
    expect(engineCallNotMade(new Error('ENGINE_NOT_CONFIGURED'))).toBe(false);
  });
});
