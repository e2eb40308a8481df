import { ServiceError } from '../errors';
import { ENDPOINT_BODY } from './decisions';
import { ENGINE_SETTINGS_BODY, PROVIDER_KEY_BODY } from './engine';
import { parseBody } from './parse-body';

function details(schema: Parameters<typeof parseBody>[0], body: unknown) {
  try {
    parseBody(schema, body, 'm');
  } catch (error) {
    if (error instanceof ServiceError) return error.details;
    throw error;
  }
  return null;
}

describe('provider key bodies', () => {
  it('accept keys of 8 to 512 printable characters for anthropic or openai', () => {
    expect(PROVIDER_KEY_BODY.parse({ provider: 'openai', api_key: 'a'.repeat(8) })).toEqual({ provider: 'openai', api_key: 'a'.repeat(8) });
    expect(details(PROVIDER_KEY_BODY, { provider: 'anthropic', api_key: 'a'.repeat(512) })).toBeNull();
  });

  it.each([
    ['a'.repeat(7), 'must be 8 to 512 characters'],
    ['a'.repeat(513), 'must be 8 to 512 characters'],
    ['sk-has space', 'must be printable ASCII without spaces'],
    ['sk-line\nbreak', 'must be printable ASCII without spaces'],
    ['sk-é-1234567', 'must be printable ASCII without spaces'],
    [12345678, 'must be a string'],
    [undefined, 'must be a string'],
  ])('refuses the key %p: %s', (apiKey, message) => {
    expect(details(PROVIDER_KEY_BODY, { provider: 'openai', api_key: apiKey })).toEqual([{ path: 'api_key', message }]);
  });

  it('names the provider and the key at once', () => {
    expect(details(PROVIDER_KEY_BODY, { provider: 'azure' })).toEqual([
      { path: 'provider', message: 'must be anthropic or openai' },
      { path: 'api_key', message: 'must be a string' },
    ]);
  });
});

describe('engine settings bodies', () => {
  it('change only what is given; a null default engine is a change back to the service default', () => {
    expect(ENGINE_SETTINGS_BODY.parse({ use_own_key: true })).toEqual({ use_own_key: true });
    expect(ENGINE_SETTINGS_BODY.parse({ default_engine: null })).toEqual({ default_engine: null });
    expect(ENGINE_SETTINGS_BODY.parse({ use_own_key: false, default_engine: 'llm' })).toEqual({ use_own_key: false, default_engine: 'llm' });
  });

  it.each([
    [{}, ''],
    [{ use_own_key: 'yes' }, 'use_own_key'],
    [{ use_own_key: null }, 'use_own_key'],
    [{ default_engine: 'gpt-4' }, 'default_engine'],
    [{ default_engine: 1 }, 'default_engine'],
    [{ default_engine: '' }, 'default_engine'],
  ])('refuses %j at %j', (body, path) => {
    expect(details(ENGINE_SETTINGS_BODY, body)).toEqual([{ path, message: expect.any(String) }]);
  });

  it('names every wrong field at once', () => {
    expect(details(ENGINE_SETTINGS_BODY, { use_own_key: 1, default_engine: 'x' })).toEqual([
      { path: 'use_own_key', message: 'must be true or false' },
      { path: 'default_engine', message: 'must be llm, checkpoint or null' },
    ]);
  });
});

describe('the endpoint switch', () => {
  it('takes a boolean and nothing else', () => {
    expect(ENDPOINT_BODY.parse({ enabled: false })).toEqual({ enabled: false });
    for (const enabled of ['true', 1, null, undefined])
      expect(details(ENDPOINT_BODY, { enabled })).toEqual([{ path: 'enabled', message: 'must be a boolean' }]);
  });
});
