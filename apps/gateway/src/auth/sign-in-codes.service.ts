import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { CODE_REQUEST_BODY, NEW_PASSWORD_BODY, parseValue, ServiceError } from '@ds/contracts';
import { Logger, PLATFORM, rowsReturned } from '@ds/platform';
import { GatewayConfig } from '../config';
import { CredentialLimits, rateLimited } from '../limits/credential-limits';
import { Mailer, MAILER } from '../mail/mailer';
import { canonicalEmail } from './email-address';
import { PasswordHasher } from './passwords';
import { AccountView, CREDENTIAL_LIMITS, PASSWORDS, SessionsService, SignedIn } from './sessions.service';
import { CodePurpose, codeMail, codeRequestRefusal, isSignInCode, newSignInCode, SIGN_IN_CODE } from './sign-in-code-rules';
import { sha256 } from './tokens';

/** The one answer to every failed code: it never tells an unknown e-mail from a wrong, used or expired code. */
function wrongCode(lastAttempt = false): ServiceError {
  return new ServiceError(
    'UNAUTHORIZED',
    lastAttempt ? 'Wrong code, and that was its last attempt; ask for a new code.' : 'Wrong or expired code; check it, or ask for a new one.',
  );
}

const NO_MAIL: Record<CodePurpose, string> = {
  sign_in: 'Sign-in codes are not available: this installation sends no e-mail. Sign in with your password.',
  password_reset: 'Passwords cannot be reset by e-mail: this installation sends no e-mail. Ask its operator.',
  verify_email: 'E-mail addresses cannot be verified: this installation sends no e-mail, and none needs verifying.',
};

interface CodeOwner {
  id: string;
  email: string;
  name: string;
}

/**
 * Six-digit codes sent by e-mail, to sign in, to choose a new password, or to verify a signed-in account's address
 * (the spec's limits, for each kind: valid 10 minutes, 5 attempts, 3 codes per e-mail per 10 minutes, 10 per day).
 * A request answers the same whether the e-mail has an account or not, and the mail leaves after the answer, so
 * neither the reply nor its timing says which e-mails have one. Whoever spends a code has proven the address.
 */
@Injectable()
export class SignInCodesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(PASSWORDS) private readonly passwords: PasswordHasher,
    @Inject(CREDENTIAL_LIMITS) private readonly limits: CredentialLimits,
    @Inject(MAILER) private readonly mailer: Mailer,
    @Inject(PLATFORM.config) private readonly config: GatewayConfig,
    @Inject(PLATFORM.logger) private readonly logger: Logger,
    private readonly sessions: SessionsService,
  ) {}

  methods(): { password: true; sign_in_code: boolean; password_reset: boolean; email_verification: boolean } {
    const mail = this.mailer.enabled;
    return { password: true, sign_in_code: mail, password_reset: mail, email_verification: mail };
  }

  request(input: { email?: unknown }, address: string): Promise<{ expires_at: string }> {
    return this.requestFor('sign_in', input, address);
  }

  requestPasswordReset(input: { email?: unknown }, address: string): Promise<{ expires_at: string }> {
    return this.requestFor('password_reset', input, address);
  }

  private async requestFor(purpose: 'sign_in' | 'password_reset', input: { email?: unknown }, address: string): Promise<{ expires_at: string }> {
    await this.limits.beforeSignIn(address, input.email);
    const { email } = parseValue(CODE_REQUEST_BODY, input, 'The e-mail is not valid.');
    this.requireMail(purpose);
    return this.issue(purpose, canonicalEmail(email));
  }

  /** Mails a code to the signed-in user's own address; an address already verified needs none (409). */
  async requestVerification(userId: string): Promise<{ email: string; expires_at: string }> {
    this.requireMail('verify_email');
    const account = await this.sessions.account(userId);
    if (account.email_verified) throw new ServiceError('CONFLICT', 'This e-mail address is already verified.');
    return { email: account.email, ...(await this.issue('verify_email', account.email)) };
  }

  private requireMail(purpose: CodePurpose): void {
    if (!this.mailer.enabled) throw new ServiceError('SERVICE_UNAVAILABLE', NO_MAIL[purpose]);
  }

  private async issue(purpose: CodePurpose, email: string): Promise<{ expires_at: string }> {
    const emailHash = sha256(email);
    // Refused before the code is hashed (scrypt costs what a password does), then counted again under the lock.
    await this.refuseOverLimits(this.db.manager, purpose, emailHash);
    const code = newSignInCode();
    const codeHash = await this.passwords.hash(code);
    const expiresAt = new Date(Date.now() + SIGN_IN_CODE.validMinutes * 60_000);
    const userId = await this.db.transaction(async (tx) => {
      // One e-mail's requests of one kind queue here, so that concurrent ones cannot all pass the count.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${purpose}-codes:${emailHash}`]);
      await this.refuseOverLimits(tx, purpose, emailHash);
      const [user] = (await tx.query('SELECT id FROM users WHERE email = $1', [email])) as Array<{ id: string }>;
      // A new code replaces the ones of its kind before it.
      await tx.query(`UPDATE sign_in_codes SET expires_at = now() WHERE email_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`, [
        emailHash,
        purpose,
      ]);
      await tx.query('INSERT INTO sign_in_codes (id, email_hash, user_id, code_hash, expires_at, purpose) VALUES ($1, $2, $3, $4, $5, $6)', [
        randomUUID(),
        emailHash,
        user?.id ?? null,
        codeHash,
        expiresAt,
        purpose,
      ]);
      return user?.id ?? null;
    });
    if (userId !== null) {
      const mail = codeMail(purpose, code, this.config.appUrl);
      this.mailer.send({ to: email, ...mail }).catch((error: unknown) => this.logger.error({ err: error, userId, purpose }, 'could not send a code'));
    }
    return { expires_at: expiresAt.toISOString() };
  }

  private async refuseOverLimits(manager: EntityManager, purpose: CodePurpose, emailHash: string): Promise<void> {
    const sent = (await manager.query(`SELECT created_at FROM sign_in_codes WHERE email_hash = $1 AND purpose = $2 AND created_at > now() - interval '1 day'`, [
      emailHash,
      purpose,
    ])) as Array<{ created_at: Date }>;
    const refusal = codeRequestRefusal(
      sent.map((row) => row.created_at),
      new Date(),
    );
    if (refusal) {
      const limit = refusal.window === 'day' ? `${SIGN_IN_CODE.perDay} a day` : `${SIGN_IN_CODE.perTenMinutes} every 10 minutes`;
      throw rateLimited(`Too many codes of this kind for this e-mail (${limit})`, refusal.retryAfterSeconds);
    }
  }

  /** Signs in with a sign-in code; on an account whose address nobody had proven, the prover alone keeps it. */
  async verify(input: { email?: unknown; code?: unknown }, address: string, userAgent: string | null = null): Promise<SignedIn> {
    await this.limits.beforeSignIn(address, input.email);
    if (typeof input.email !== 'string' || !isSignInCode(input.code)) throw wrongCode();
    const user = await this.spend('sign_in', canonicalEmail(input.email), input.code);
    return this.db.transaction(async (tx) => {
      await this.sessions.proveAddress(tx, user.id, null);
      return this.sessions.openSession(user, { method: 'sign_in_code', userAgent, address }, tx);
    });
  }

  /** A new password by a reset code: it proves the address, ends every session and opens one. */
  async resetPassword(input: { email?: unknown; code?: unknown; password?: unknown }, address: string, userAgent: string | null = null): Promise<SignedIn> {
    await this.limits.beforeSignIn(address, input.email);
    this.requireMail('password_reset');
    const { password } = parseValue(NEW_PASSWORD_BODY, input, 'The new password is not valid.');
    if (typeof input.email !== 'string' || !isSignInCode(input.code)) throw wrongCode();
    const user = await this.spend('password_reset', canonicalEmail(input.email), input.code);
    const passwordHash = await this.passwords.hash(password);
    return this.db.transaction(async (tx) => {
      await this.sessions.proveAddress(tx, user.id, null);
      await tx.query('UPDATE users SET password_hash = $2, failed_sign_ins = 0, locked_until = NULL WHERE id = $1', [user.id, passwordHash]);
      await tx.query('DELETE FROM sessions WHERE user_id = $1', [user.id]);
      return this.sessions.openSession(user, { method: 'password_reset', userAgent, address }, tx);
    });
  }

  /**
   * Verifies the signed-in user's address with the code mailed to it. Every other session ends; the password stays
   * only when this session was opened with it (see SessionsService.proveAddress).
   */
  async verifyAddress(userId: string, sessionToken: string, input: { code?: unknown }): Promise<AccountView> {
    this.requireMail('verify_email');
    if (!isSignInCode(input.code)) throw wrongCode();
    const account = await this.sessions.account(userId);
    await this.spend('verify_email', account.email, input.code, userId);
    const method = await this.sessions.sessionMethod(sessionToken);
    await this.db.transaction((tx) =>
      this.sessions.proveAddress(tx, userId, { tokenHash: sha256(sessionToken), keepsPassword: method === 'password' || method === 'sign_up' }),
    );
    return this.sessions.account(userId);
  }

  /**
   * Spends the latest live code of this kind for the e-mail. The attempt is counted before the code is compared, in
   * one statement: concurrent guesses queue on the row, and none gets past the fifth. A code sent to an e-mail
   * without an account (no mail left then) has no user and never works.
   */
  private async spend(purpose: CodePurpose, email: string, code: string, userId: string | null = null): Promise<CodeOwner> {
    const [taken] = rowsReturned<{ id: string; code_hash: string; attempts: number }>(
      await this.db.query(
        `UPDATE sign_in_codes SET attempts = attempts + 1
          WHERE id = (SELECT id FROM sign_in_codes WHERE email_hash = $1 AND purpose = $3 AND used_at IS NULL AND expires_at > now()
                       ORDER BY created_at DESC LIMIT 1)
            AND attempts < $2
          RETURNING id, code_hash, attempts`,
        [sha256(email), SIGN_IN_CODE.attempts, purpose],
      ),
    );
    if (!taken) {
      await this.passwords.verifyNothing(code);
      throw wrongCode();
    }
    if (!(await this.passwords.verify(code, taken.code_hash))) throw wrongCode(taken.attempts >= SIGN_IN_CODE.attempts);
    // Spent once, by whichever right attempt gets here first.
    const [user] = rowsReturned<CodeOwner>(
      await this.db.query(
        `UPDATE sign_in_codes c SET used_at = now() FROM users u
          WHERE c.id = $1 AND c.used_at IS NULL AND u.id = c.user_id AND ($2::text IS NULL OR u.id = $2)
          RETURNING u.id, u.email, u.name`,
        [taken.id, userId],
      ),
    );
    if (!user) throw wrongCode();
    return user;
  }
}
