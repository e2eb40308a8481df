import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, MoreThan } from 'typeorm';
import { parseValue, ServiceError, SIGN_UP_BODY } from '@ds/contracts';
import { newId } from '@ds/ids';
import { isUniqueViolation, Logger, PLATFORM, rowsReturned } from '@ds/platform';
import { SessionEntity, SessionMethod, UserEntity } from '../entities';
import { CredentialLimits, rateLimited } from '../limits/credential-limits';
import { UUID_PATTERN } from '../workspaces/workspaces.service';
import { canonicalEmail } from './email-address';
import { PasswordHasher } from './passwords';
import { newSessionToken, sha256 } from './tokens';

const SESSION_DAYS = 30;
const MAX_FAILED_SIGN_INS = 5;
const LOCK_MINUTES = 15;
const USER_AGENT_MAX = 256;
/** Last activity moves at most this often per session, so signed-in requests rarely write. */
const ACTIVITY_RESOLUTION_MS = 60_000;

export const PASSWORDS = Symbol('passwords');
export const CREDENTIAL_LIMITS = Symbol('credential-limits');

/** One sign-in attempt taken for an e-mail: the account, and its hash when the attempt was granted. */
interface TakenAttempt {
  id: string;
  email: string;
  name: string;
  locked_until: Date | null;
  /** False when the e-mail is locked: the attempt was not taken. */
  taken: boolean;
  password_hash: string | null;
}

/** Who opens a session and how, as the user's list of sessions shows it. */
export interface SessionOrigin {
  method: SessionMethod;
  userAgent: string | null;
  /** The client address the gateway saw (after `TRUSTED_PROXIES`). */
  address: string | null;
}

export interface SessionView {
  id: string;
  method: SessionMethod;
  user_agent: string | null;
  /** Null for sessions opened before addresses were kept. */
  address: string | null;
  created_at: string;
  /** Null until the session is used after it was opened (or for sessions opened before activity was kept). */
  last_active_at: string | null;
  expires_at: string;
  current: boolean;
}

export interface AccountView {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  has_password: boolean;
}

export interface SignedIn {
  user: { id: string; email: string; name: string };
  session: { token: string; expires_at: string };
}

/** The answer to an attempt on a locked e-mail: the same whether the e-mail has an account or not. */
function lockedOut(lockedUntil: Date | null): ServiceError {
  const secondsLeft = lockedUntil ? Math.ceil((lockedUntil.getTime() - Date.now()) / 1000) : LOCK_MINUTES * 60;
  return rateLimited(`Too many wrong attempts for this e-mail; wait ${LOCK_MINUTES} minutes`, Math.max(1, secondsLeft));
}

@Injectable()
export class SessionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PASSWORDS) private readonly passwords: PasswordHasher,
    @Inject(CREDENTIAL_LIMITS) private readonly limits: CredentialLimits,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
  ) {}

  /** `address` is the client's; the per-address and per-e-mail ceilings are checked before anything is hashed. */
  async signUp(input: Record<string, unknown>, address: string, userAgent: string | null = null): Promise<SignedIn> {
    await this.limits.beforeSignUp(address, input.email);
    const { email, password, name } = parseValue(SIGN_UP_BODY, input, 'The sign-up is not valid.');
    const user: UserEntity = this.db.getRepository(UserEntity).create({
      id: newId('usr'),
      email: canonicalEmail(email),
      name,
      passwordHash: await this.passwords.hash(password),
      failedSignIns: 0,
      lockedUntil: null,
      emailVerifiedAt: null,
    });
    try {
      await this.db.getRepository(UserEntity).insert(user);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ServiceError('CONFLICT', 'An account with this e-mail already exists.');
      throw error;
    }
    return this.openSession(user, { method: 'sign_up', userAgent, address });
  }

  async signIn(input: { email?: unknown; password?: unknown }, address: string, userAgent: string | null = null): Promise<SignedIn> {
    await this.limits.beforeSignIn(address, input.email);
    if (typeof input.email !== 'string' || typeof input.password !== 'string') {
      throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    }
    const email = canonicalEmail(input.email);
    const attempt = await this.takeAttempt(email);
    if (!attempt) {
      // An e-mail without an account is locked like one with an account, so the lock tells nothing.
      const unknown = await this.takeUnknownEmailAttempt(email);
      if (!unknown.taken) throw lockedOut(unknown.locked_until);
      await this.passwords.verifyNothing(input.password);
      throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    }
    if (!attempt.taken) throw lockedOut(attempt.locked_until);
    if (attempt.password_hash === null) {
      // An account without a password (taken away when its address was proven by someone else) answers like a wrong one.
      await this.passwords.verifyNothing(input.password);
      throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    }
    if (!(await this.passwords.verify(input.password, attempt.password_hash))) throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    const rehashed = this.passwords.needsRehash(attempt.password_hash) ? await this.passwords.hash(input.password) : null;
    await this.db
      .getRepository(UserEntity)
      .update({ id: attempt.id }, { failedSignIns: 0, lockedUntil: null, ...(rehashed ? { passwordHash: rehashed } : {}) });
    return this.openSession(attempt, { method: 'password', userAgent, address });
  }

  /**
   * Counts the attempt before the password is checked, in one statement: concurrent attempts queue on the
   * row, so once the fifth has been taken the rest find the e-mail locked and no hash is computed for
   * them; a right password then resets the count. A lock that has run out starts a fresh count. Answers
   * null for an unknown e-mail, and a row not taken when the e-mail is locked.
   */
  private async takeAttempt(email: string): Promise<TakenAttempt | null> {
    const rows: TakenAttempt[] = await this.db.query(
      `WITH account AS (SELECT id, email, name, locked_until FROM users WHERE email = $1),
       taken AS (
         UPDATE users SET
           failed_sign_ins = CASE WHEN locked_until IS NULL THEN failed_sign_ins + 1 ELSE 1 END,
           locked_until = CASE WHEN (CASE WHEN locked_until IS NULL THEN failed_sign_ins + 1 ELSE 1 END) >= $2
                          THEN now() + make_interval(mins => $3) ELSE NULL END
         WHERE email = $1 AND (locked_until IS NULL OR locked_until <= now())
         RETURNING id, password_hash
       )
       SELECT account.id, account.email, account.name, account.locked_until, taken.id IS NOT NULL AS taken, taken.password_hash
         FROM account LEFT JOIN taken ON taken.id = account.id`,
      [email, MAX_FAILED_SIGN_INS, LOCK_MINUTES],
    );
    return rows[0] ?? null;
  }

  /** The same count and lock as `takeAttempt`, for an e-mail without an account, keyed by the e-mail's hash. */
  private async takeUnknownEmailAttempt(email: string): Promise<{ taken: boolean; locked_until: Date | null }> {
    const rows: Array<{ taken: boolean; locked_until: Date | null }> = await this.db.query(
      `WITH before AS (SELECT locked_until FROM unknown_email_sign_ins WHERE email_hash = $1),
       taken AS (
         INSERT INTO unknown_email_sign_ins AS attempts (email_hash, failed_sign_ins, locked_until, last_attempt_at)
         VALUES ($1, 1, CASE WHEN 1 >= $2 THEN now() + make_interval(mins => $3) ELSE NULL END, now())
         ON CONFLICT (email_hash) DO UPDATE SET
           failed_sign_ins = CASE WHEN attempts.locked_until IS NULL THEN attempts.failed_sign_ins + 1 ELSE 1 END,
           locked_until = CASE WHEN (CASE WHEN attempts.locked_until IS NULL THEN attempts.failed_sign_ins + 1 ELSE 1 END) >= $2
                          THEN now() + make_interval(mins => $3) ELSE NULL END,
           last_attempt_at = now()
         WHERE attempts.locked_until IS NULL OR attempts.locked_until <= now()
         RETURNING email_hash
       )
       SELECT EXISTS (SELECT 1 FROM taken) AS taken, (SELECT locked_until FROM before) AS locked_until`,
      [sha256(email), MAX_FAILED_SIGN_INS, LOCK_MINUTES],
    );
    const [row] = rows;
    if (row === undefined) throw new Error('a SELECT without FROM answered no row');
    return row;
  }

  async signOut(token: string): Promise<void> {
    await this.db.getRepository(SessionEntity).delete({ tokenHash: sha256(token) });
  }

  /** The signed-in user's id, or 401 for a missing, unknown or expired session. */
  async userFor(token: string | null): Promise<string> {
    if (!token) throw new ServiceError('UNAUTHORIZED', 'Sign in first: no session was sent.');
    const session = await this.db.getRepository(SessionEntity).findOneBy({ tokenHash: sha256(token), expiresAt: MoreThan(new Date()) });
    if (!session) throw new ServiceError('UNAUTHORIZED', 'The session is unknown or has expired; sign in again.');
    if (session.lastActiveAt === null || session.lastActiveAt.getTime() < Date.now() - ACTIVITY_RESOLUTION_MS) this.touch(session.tokenHash);
    return session.userId;
  }

  /**
   * Records activity without holding up the request; the condition repeats the minute check in the database, so
   * replicas and concurrent requests that all saw a stale time write it once.
   */
  private touch(tokenHash: string): void {
    this.db
      .query(
        `UPDATE sessions SET last_active_at = now()
          WHERE token_hash = $1 AND (last_active_at IS NULL OR last_active_at < now() - make_interval(secs => $2))`,
        [tokenHash, ACTIVITY_RESOLUTION_MS / 1000],
      )
      .catch((error: unknown) => this.logger.debug({ err: error }, 'could not record when a session was last active'));
  }

  async openSession(user: { id: string; email: string; name: string }, origin: SessionOrigin, manager: EntityManager = this.db.manager): Promise<SignedIn> {
    const token = newSessionToken();
    const expiresAt = new Date(Date.now() + SESSION_DAYS * 86_400_000);
    await manager.getRepository(SessionEntity).insert({
      tokenHash: sha256(token),
      userId: user.id,
      expiresAt,
      method: origin.method,
      userAgent: origin.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
      address: origin.address,
    });
    return { user: { id: user.id, email: user.email, name: user.name }, session: { token, expires_at: expiresAt.toISOString() } };
  }

  /** The signed-in user's live sessions, newest first; `current` marks the one `token` belongs to. */
  async list(userId: string, token: string | null): Promise<{ data: SessionView[] }> {
    const rows = await this.db.getRepository(SessionEntity).find({
      where: { userId, expiresAt: MoreThan(new Date()) },
      order: { createdAt: 'DESC', id: 'ASC' },
    });
    const currentHash = token === null ? null : sha256(token);
    return {
      data: rows.map((row) => ({
        id: row.id,
        method: row.method,
        user_agent: row.userAgent,
        address: row.address,
        created_at: row.createdAt.toISOString(),
        last_active_at: row.lastActiveAt?.toISOString() ?? null,
        expires_at: row.expiresAt.toISOString(),
        current: row.tokenHash === currentHash,
      })),
    };
  }

  /** Ends one of the user's own sessions (the current one too: that is signing out); another user's is 404. */
  async end(userId: string, sessionId: string): Promise<void> {
    const ended = UUID_PATTERN.test(sessionId)
      ? rowsReturned(await this.db.query('DELETE FROM sessions WHERE id = $1 AND user_id = $2 RETURNING id', [sessionId, userId]))
      : [];
    if (ended.length === 0) throw new ServiceError('NOT_FOUND', 'No session of yours with this id.');
  }

  /** Ends every session of the user but the one `token` belongs to; answers how many ended. */
  async endOthers(userId: string, token: string | null): Promise<{ revoked: number }> {
    const ended = rowsReturned(
      await this.db.query('DELETE FROM sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2 RETURNING id', [
        userId,
        token === null ? null : sha256(token),
      ]),
    );
    return { revoked: ended.length };
  }

  /**
   * Someone proved they receive mail at the account's address. The first proof makes the account theirs alone:
   * every other session ends and, unless the proof came from a session opened with the account's password (whose
   * holder then knows it), the password goes too, since whoever signed up under an address they did not own set it.
   * Later proofs change nothing. Runs in the caller's transaction, which opens the prover's session after it.
   */
  async proveAddress(tx: EntityManager, userId: string, proving: { tokenHash: string; keepsPassword: boolean } | null): Promise<void> {
    const [user] = (await tx.query('SELECT email_verified_at FROM users WHERE id = $1 FOR UPDATE', [userId])) as Array<{ email_verified_at: Date | null }>;
    if (!user || user.email_verified_at !== null) return;
    await tx.query(
      `UPDATE users SET email_verified_at = now(), failed_sign_ins = 0, locked_until = NULL,
         password_hash = CASE WHEN $2 THEN password_hash ELSE NULL END WHERE id = $1`,
      [userId, proving?.keepsPassword ?? false],
    );
    await tx.query('DELETE FROM sessions WHERE user_id = $1 AND token_hash IS DISTINCT FROM $2', [userId, proving?.tokenHash ?? null]);
  }

  /** How the session `token` was opened, or null for none. */
  async sessionMethod(token: string): Promise<SessionMethod | null> {
    const session = await this.db.getRepository(SessionEntity).findOneBy({ tokenHash: sha256(token) });
    return session?.method ?? null;
  }

  /** The signed-in user, with whether the address is proven and whether the account has a password. */
  async account(userId: string): Promise<AccountView> {
    const user = await this.db.getRepository(UserEntity).findOneByOrFail({ id: userId });
    return { id: user.id, email: user.email, name: user.name, email_verified: user.emailVerifiedAt !== null, has_password: user.passwordHash !== null };
  }
}
