import { ServiceError } from '@ds/contracts';
import { engineSettingsChange } from './credentials.service';

const ws = { workspaceId: 'ws-1' };

function refusal(request: Record<string, unknown>): ServiceError {
  try {
    engineSettingsChange({ ...ws, ...request });
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('engineSettingsChange', () => {
  it('changes only what is given; a null default engine is a change back to the service default', () => {
    expect(engineSettingsChange({ ...ws, useOwnKey: true })).toEqual({ useOwnKey: true });
    expect(engineSettingsChange({ ...ws, defaultEngine: 'checkpoint' })).toEqual({ useOwnKey: null, defaultEngine: 'checkpoint' });
    expect(engineSettingsChange({ ...ws, defaultEngine: null })).toEqual({ useOwnKey: null, defaultEngine: null });
    expect(engineSettingsChange({ ...ws, useOwnKey: false, defaultEngine: 'llm' })).toEqual({ useOwnKey: false, defaultEngine: 'llm' });
  });

  it.each([
    [{}, ''],
    [{ useOwnKey: 'yes' }, 'use_own_key'],
    [{ useOwnKey: null }, 'use_own_key'],
    [{ defaultEngine: 'gpt-4' }, 'default_engine'],
    [{ defaultEngine: 1 }, 'default_engine'],
    [{ defaultEngine: '' }, 'default_engine'],
  ])('refuses %j with 400 INVALID_REQUEST at %j', (request, path) => {
    const error = refusal(request);
    expect({ code: error.code, status: error.status }).toEqual({ code: 'INVALID_REQUEST', status: 400 });
    expect(error.details).toEqual([{ path, message: expect.any(String) }]);
  });

  it('names every wrong field at once', () => {
    expect(refusal({ useOwnKey: 1, defaultEngine: 'x' }).details).toEqual([
      { path: 'use_own_key', message: expect.any(String) },
      { path: 'default_engine', message: expect.any(String) },
    ]);
  });
});
