import { SECRET_VALUE_MAX } from '@ds/decision-schema';
import { ServiceError } from '../errors';
import { WORKSPACE_SECRET } from './delivery';
import { parseValue } from './parse-body';

function details(secret: { name: unknown; value: unknown }) {
  try {
    parseValue(WORKSPACE_SECRET, secret, 'm');
  } catch (error) {
    if (error instanceof ServiceError) return error.details;
    throw error;
  }
  return null;
}

const NAME = 'must be 1 to 64 characters: capital letters, digits and _, starting with a letter';

describe('workspace secrets', () => {
  it('accept names of capitals, digits and _ starting with a letter, and values of 1 to 4,096 characters', () => {
    expect(WORKSPACE_SECRET.parse({ name: 'CRM_TOKEN_2', value: 'x' })).toEqual({ name: 'CRM_TOKEN_2', value: 'x' });
    expect(details({ name: 'A'.repeat(64), value: 'v'.repeat(SECRET_VALUE_MAX) })).toBeNull();
  });

  it.each([
    ['lower case', 'token'],
    ['a leading digit', '1TOKEN'],
    ['a dash', 'CRM-TOKEN'],
    ['65 characters', 'A'.repeat(65)],
    ['empty', ''],
    ['not a string', 7],
  ])('refuse a name with %s', (_, name) => {
    expect(details({ name, value: 'v' })).toEqual([{ path: 'name', message: NAME }]);
  });

  it.each([
    ['empty', '', `must be a string of 1 to ${SECRET_VALUE_MAX} characters`],
    ['too long', 'v'.repeat(SECRET_VALUE_MAX + 1), `must be a string of 1 to ${SECRET_VALUE_MAX} characters`],
    ['missing', undefined, `must be a string of 1 to ${SECRET_VALUE_MAX} characters`],
    ['not a string', { value: 'x' }, `must be a string of 1 to ${SECRET_VALUE_MAX} characters`],
    ['a line break', 'a\r\nInjected: yes', 'must not contain line breaks or NUL'],
    ['a NUL', 'a\0b', 'must not contain line breaks or NUL'],
  ])('refuse a value that is %s', (_, value, message) => {
    expect(details({ name: 'OK', value })).toEqual([{ path: 'value', message }]);
  });

  it('name the name and the value in one answer', () => {
    expect(details({ name: 'bad', value: '' })).toEqual([
      { path: 'name', message: NAME },
      { path: 'value', message: `must be a string of 1 to ${SECRET_VALUE_MAX} characters` },
    ]);
  });
});
