import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { newId } from '@ds/ids';
import { SessionEntity, UserEntity } from '../entities';
import { hashPassword, passwordProblem, verifyPassword } from './passwords';
import { newSessionToken, sha256 } from './tokens';

const SESSION_DAYS = 30;
const MAX_FAILED_SIGN_INS = 5;
const LOCK_MINUTES = 15;
const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
const UNIQUE_VIOLATION = '23505';

export interface SignedIn {
  user: { id: string; email: string; name: string };
  session: { token: string; expires_at: string };
}

@Injectable()
export class SessionsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async signUp(input: { email?: unknown; password?: unknown; name?: unknown }): Promise<SignedIn> {
    const issues: Array<{ path: string; message: string }> = [];
    if (typeof input.email !== 'string' || !EMAIL_PATTERN.test(input.email)) issues.push({ path: 'email', message: 'must be an e-mail address' });
    const problem = passwordProblem(input.password);
    if (problem) issues.push({ path: 'password', message: problem });
    if (typeof input.name !== 'string' || input.name.trim().length < 1 || input.name.length > 80) issues.push({ path: 'name', message: 'must be 1 to 80 characters' });
    if (issues.length > 0) throw new ServiceError('INVALID_REQUEST', 'The sign-up is not valid.', issues);
    const user: UserEntity = this.db.getRepository(UserEntity).create({
      id: newId('usr'),
      email: (input.email as string).toLowerCase(),
      name: input.name as string,
      passwordHash: await hashPassword(input.password as string),
      failedSignIns: 0,
      lockedUntil: null,
    });
    try {
      await this.db.getRepository(UserEntity).insert(user);
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new ServiceError('CONFLICT', 'An account with this e-mail already exists.');
      throw error;
    }
    return this.openSession(user);
  }

  async signIn(input: { email?: unknown; password?: unknown }): Promise<SignedIn> {
    if (typeof input.email !== 'string' || typeof input.password !== 'string') {
      throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    }
    const users = this.db.getRepository(UserEntity);
    const user = await users.findOneBy({ email: input.email.toLowerCase() });
    if (!user) throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    if (user.lockedUntil && user.lockedUntil > new Date()) {
      throw new ServiceError('RATE_LIMITED', 'Too many wrong attempts for this e-mail; wait 15 minutes.', { retryAfter: Math.ceil((user.lockedUntil.getTime() - Date.now()) / 1000) });
    }
    if (!(await verifyPassword(input.password, user.passwordHash))) {
      // Counted in the database so that every gateway replica sees the same attempts.
      await this.db.query(
        `UPDATE users SET failed_sign_ins = failed_sign_ins + 1,
           locked_until = CASE WHEN failed_sign_ins + 1 >= $2 THEN now() + make_interval(mins => $3) ELSE locked_until END
         WHERE id = $1`,
        [user.id, MAX_FAILED_SIGN_INS, LOCK_MINUTES],
      );
      throw new ServiceError('UNAUTHORIZED', 'Wrong e-mail or password.');
    }
    await users.update({ id: user.id }, { failedSignIns: 0, lockedUntil: null });
    return this.openSession(user);
  }

  async signOut(token: string): Promise<void> {
    await this.db.getRepository(SessionEntity).delete({ tokenHash: sha256(token) });
  }

  /** The signed-in user's id, or 401 for a missing, unknown or expired session. */
  async userFor(token: string | null): Promise<string> {
    if (!token) throw new ServiceError('UNAUTHORIZED', 'Sign in first: no session was sent.');
    const session = await this.db.getRepository(SessionEntity).findOneBy({ tokenHash: sha256(token), expiresAt: MoreThan(new Date()) });
    if (!session) throw new ServiceError('UNAUTHORIZED', 'The session is unknown or has expired; sign in again.');
    return session.userId;
  }

  private async openSession(user: UserEntity): Promise<SignedIn> {
    const token = newSessionToken();
    const expiresAt = new Date(Date.now() + SESSION_DAYS * 86_400_000);
    await this.db.getRepository(SessionEntity).insert({ tokenHash: sha256(token), userId: user.id, expiresAt });
    return { user: { id: user.id, email: user.email, name: user.name }, session: { token, expires_at: expiresAt.toISOString() } };
  }
}
