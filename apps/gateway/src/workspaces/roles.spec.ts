import { roleReaches } from './roles';

describe('roleReaches', () => {
  it('orders viewer < member < admin < owner', () => {
    expect(roleReaches('owner', 'admin')).toBe(true);
    expect(roleReaches('admin', 'admin')).toBe(true);
    expect(roleReaches('member', 'admin')).toBe(false);
    expect(roleReaches('viewer', 'member')).toBe(false);
    expect(roleReaches('viewer', 'viewer')).toBe(true);
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', ''])('gives %j no rank at all', (role) => {
    expect(roleReaches(role, 'viewer')).toBe(false);
  });
});
