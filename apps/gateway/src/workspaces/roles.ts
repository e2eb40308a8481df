import { Role } from '../entities';

// A Map, not an object: a role read from anywhere can never find Object.prototype's properties.
const RANK: ReadonlyMap<string, number> = new Map<Role, number>([
  ['viewer', 0],
  ['member', 1],
  ['admin', 2],
  ['owner', 3],
]);

/** Whether `role` is `minimum` or above; a role that is not one of the four reaches nothing. */
export function roleReaches(role: string, minimum: Role): boolean {
  const rank = RANK.get(role);
  return rank !== undefined && rank >= RANK.get(minimum)!;
}
