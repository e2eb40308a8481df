// The contracts' own table, read from its source: the web app does not depend on the services' library.
import { ERROR_STATUS } from '../../../../libs/contracts/src/errors';
import { FAILURE_EN } from './i18n-failures';
import { RECORDED_FAILURE_CODES, recordedFailure } from './failures';

describe('recorded failures', () => {
  it('reads an invalid state as the caller’s, not to be retried unchanged, with its issues as a list', () => {
    const failure = recordedFailure({
      code: 'INVALID_STATE',
      message: 'state.plan must be one of free, pro',
      details: [{ path: 'plan', message: 'state.plan must be one of free, pro' }],
    });
    expect(failure).toEqual({
      code: 'INVALID_STATE',
      known: 'INVALID_STATE',
      message: 'state.plan must be one of free, pro',
      party: 'caller',
      retryable: false,
      details: [{ path: 'plan', message: 'state.plan must be one of free, pro' }],
      facts: [],
    });
  });

  it('puts provider trouble on the provider and lets the caller retry', () => {
    for (const code of ['ENGINE_TIMEOUT', 'ENGINE_RATE_LIMITED', 'ENGINE_UNAVAILABLE', 'ENGINE_ERROR']) {
      expect(recordedFailure({ code, message: 'x' })).toMatchObject({ party: 'provider', retryable: true });
    }
    for (const code of ['ENGINE_NOT_CONFIGURED', 'ENGINE_AUTH_FAILED', 'ENGINE_INVALID_REQUEST']) {
      expect(recordedFailure({ code, message: 'x' })).toMatchObject({ party: 'settings', retryable: false });
    }
  });

  it('says named details as text and keeps a code it does not know, without inventing words for it', () => {
    const failure = recordedFailure({ code: 'SOMETHING_NEW', message: 'm', details: { limit: 3, names: ['a', 'b'], nested: { x: 1 } } });
    expect(failure).toMatchObject({ code: 'SOMETHING_NEW', known: null, party: 'service', retryable: null, details: [] });
    expect(failure.facts).toEqual([
      ['limit', '3'],
      ['names', 'a, b'],
      ['nested', '{"x":1}'],
    ]);
  });

  it('knows every engine error code the contracts define', () => {
    const engineCodes = Object.keys(ERROR_STATUS).filter((code) => code.startsWith('ENGINE_'));
    expect(engineCodes.filter((code) => !(RECORDED_FAILURE_CODES as readonly string[]).includes(code))).toEqual([]);
    expect(RECORDED_FAILURE_CODES.filter((code) => !(code in ERROR_STATUS))).toEqual([]);
  });

  it('reads a record without an error object as an internal error', () => {
    expect(recordedFailure(null)).toMatchObject({ code: 'INTERNAL_ERROR', message: '', details: [], facts: [] });
  });

  it('has a title and an advice in English for every code a run records', () => {
    const texts = FAILURE_EN as Record<string, string>;
    for (const code of RECORDED_FAILURE_CODES) {
      expect({ code, title: Boolean(texts[`fail.title.${code}`]), advice: Boolean(texts[`fail.advice.${code}`]) }).toEqual({ code, title: true, advice: true });
    }
  });
});
