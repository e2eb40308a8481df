import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/** Stored costs outside these bounds are not ours: they are refused rather than computed. */
const STORED_BOUNDS = { N: [1_024, 4_194_304], r: [1, 32], p: [1, 16] } as const;

/**
 * scrypt holds 128·N·r bytes for its whole computation; Node refuses to go past `maxmem` (32 MiB by
 * default, below what N=2^17 needs), so the ceiling follows the cost with room for the p blocks.
 */
function maxmemFor(cost: ScryptCost): number {
  return 128 * cost.r * (cost.N + cost.p) + 1_048_576;
}

interface StoredHash {
  cost: ScryptCost;
  salt: Buffer;
  hash: Buffer;
}

function parseStored(stored: string): StoredHash | null {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split('$');
  if (scheme !== 'scrypt' || rest.length > 0 || salt === undefined || hash === undefined) return null;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  for (const name of ['N', 'r', 'p'] as const) {
    const [min, max] = STORED_BOUNDS[name];
    if (!Number.isInteger(cost[name]) || cost[name] < min || cost[name] > max) return null;
  }
  if ((cost.N & (cost.N - 1)) !== 0) return null;
  const hashBytes = Buffer.from(hash, 'base64');
  if (hashBytes.length === 0) return null;
  return { cost, salt: Buffer.from(salt, 'base64'), hash: hashBytes };
}

/**
 * scrypt with a random salt; the cost travels with each hash (`scrypt$N$r$p$salt$hash`) so that it can be
 * raised later: a hash made at a lower cost is replaced at the next successful sign-in.
 */
export class PasswordHasher {
  readonly cost: ScryptCost;
  private dummy: Promise<string> | null = null;

  constructor(N: number) {
    this.cost = { N, r: 8, p: 1 };
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_LENGTH);
    const hash = await scryptAsync(password, salt, KEY_LENGTH, { ...this.cost, maxmem: maxmemFor(this.cost) });
    return `scrypt$${this.cost.N}$${this.cost.r}$${this.cost.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = parseStored(stored);
    if (!parsed) return false;
    const actual = await scryptAsync(password, parsed.salt, parsed.hash.length, { ...parsed.cost, maxmem: maxmemFor(parsed.cost) });
    return timingSafeEqual(parsed.hash, actual);
  }

  /**
   * Spends what a real verification costs and answers false, so that an unknown e-mail takes as long as
   * a known one with a wrong password.
   */
  async verifyNothing(password: string): Promise<false> {
    this.dummy ??= this.hash(randomBytes(SALT_LENGTH).toString('base64'));
    await this.verify(password, await this.dummy);
    return false;
  }

  /** True when the stored hash was made with less work than the current cost in any parameter. */
  needsRehash(stored: string): boolean {
    const parsed = parseStored(stored);
    if (!parsed) return true;
    return parsed.cost.N < this.cost.N || parsed.cost.r < this.cost.r || parsed.cost.p < this.cost.p;
  }
}
