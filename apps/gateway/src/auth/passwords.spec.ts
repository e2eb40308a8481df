import { hashPassword, passwordProblem, verifyPassword } from './passwords';

describe('passwords', () => {
  it('verifies the right password only', async () => {
    const stored = await hashPassword('correct horse 42');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
    await expect(verifyPassword('correct horse 42', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horse 43', stored)).resolves.toBe(false);
  });

  it.each([
    ['abcdefghi1', null],
    ['a1'.repeat(64), null],
    ['abcdefgh1', 'must be 10 to 128 characters'],
    ['a1'.repeat(64) + 'a', 'must be 10 to 128 characters'],
    ['abcdefghij', 'must contain letters and numbers'],
    ['1234567890', 'must contain letters and numbers'],
    [42, 'must be 10 to 128 characters'],
  ])('%p -> %p', (password, problem) => {
    expect(passwordProblem(password)).toBe(problem);
  });
});
