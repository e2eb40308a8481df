import { ServiceError } from '@ds/contracts';
import { parseDecisionVersion } from './decision-version';

describe('parseDecisionVersion', () => {
  it('reads an absent header as the active version and a positive integer as itself', () => {
    expect(parseDecisionVersion(undefined)).toBeNull();
    expect(parseDecisionVersion('1')).toBe(1);
    expect(parseDecisionVersion(' 42 ')).toBe(42);
    expect(parseDecisionVersion('2147483647')).toBe(2_147_483_647);
  });

  it.each([[''], ['0'], ['-1'], ['01'], ['1.0'], ['1e3'], ['abc'], ['2147483648'], ['99999999999'], [['1', '2']]])(
    'refuses %j with 400 naming the header',
    (header) => {
      let thrown: unknown;
      try {
        parseDecisionVersion(header);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ServiceError);
      expect(thrown).toMatchObject({ code: 'INVALID_REQUEST', details: [{ path: 'Decision-Version' }] });
    },
  );
});
