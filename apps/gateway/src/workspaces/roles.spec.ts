import { GRANTED_ROLES, isGrantedRole, roleReaches, roleRefusal } from './roles';

describe('roleReaches', () => {
  it('orders viewer < member < admin < owner', () => {
    expect(roleReaches('owner', 'admin')).toBe(true);
    expect(roleReaches('admin', 'admin')).toBe(true);
    expect(roleReaches('member', 'admin')).toBe(false);
    expect(roleReaches('viewer', 'member')).toBe(false);
    expect(roleReaches('viewer', 'viewer')).toBe(true);
  });

  it('keeps the reviewer apart: the reviews reach it and Members and up, and it reaches nothing else', () => {
    expect(['reviewer', 'member', 'admin', 'owner'].filter((role) => roleReaches(role, 'reviewer'))).toEqual(['reviewer', 'member', 'admin', 'owner']);
    expect(roleReaches('viewer', 'reviewer')).toBe(false);
    for (const minimum of ['viewer', 'member', 'admin', 'owner'] as const) expect(roleReaches('reviewer', minimum)).toBe(false);
    expect(roleRefusal('reviewer', 'viewer')).toMatchObject({ code: 'FORBIDDEN', details: { reason: 'reviewer' } });
  });

  it('grants every role below Owner', () => {
    expect(GRANTED_ROLES.filter(isGrantedRole)).toEqual(['admin', 'member', 'viewer', 'reviewer']);
    expect(isGrantedRole('owner')).toBe(false);
    expect(isGrantedRole('__proto__')).toBe(false);
  });

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', ''])('gives %j no rank at all', (role) => {
    expect(roleReaches(role, 'viewer')).toBe(false);
  });
});
