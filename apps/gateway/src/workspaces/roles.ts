import { GRANTED_ROLES, GrantedRole, ServiceError } from '@ds/contracts';
import { Role } from '../entities';

// A Map, not an object: a role read from anywhere can never find Object.prototype's properties.
const RANK: ReadonlyMap<string, number> = new Map<Role, number>([
  ['viewer', 0],
  ['member', 1],
  ['admin', 2],
  ['owner', 3],
]);

export { GRANTED_ROLES } from '@ds/contracts';

export function isGrantedRole(value: unknown): value is GrantedRole {
  return typeof value === 'string' && (GRANTED_ROLES as readonly string[]).includes(value);
}

/**
 * Whether `role` is `minimum` or above; a role that is not one of the five reaches nothing. `reviewer` is outside the
 * order: the reviews' routes ask for it, and it is reached by a reviewer and by Members and up; it reaches no other.
 */
export function roleReaches(role: string, minimum: Role): boolean {
  if (minimum === 'reviewer') return role === 'reviewer' || roleReaches(role, 'member');
  const rank = RANK.get(role);
  return rank !== undefined && rank >= RANK.get(minimum)!;
}

/** The refusal of a member whose role does not reach `minimum`. */
export function roleRefusal(role: string, minimum: Role): ServiceError {
  if (role === 'reviewer') return new ServiceError('FORBIDDEN', 'A reviewer sees and resolves reviews only.', { reason: 'reviewer' });
  if (minimum === 'reviewer') return new ServiceError('FORBIDDEN', 'This needs the reviewer role, or the member role or higher.');
  return new ServiceError('FORBIDDEN', `This needs the ${minimum} role or higher.`);
}
