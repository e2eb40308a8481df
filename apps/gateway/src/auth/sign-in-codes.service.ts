import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ServiceError } from '@ds/contracts';
import { Logger, PLATFORM, rowsReturned } from '@ds/platform';
import { GatewayConfig } from '../config';
import { CredentialLimits, rateLimited } from '../limits/credential-limits';
import { Mailer, MAILER } from '../mail/mailer';
import { PasswordHasher } from './passwords';
import { CREDENTIAL_LIMITS, EMAIL_PATTERN, PASSWORDS, SessionsService, SignedIn } from './sessions.service';
import { codeRequestRefusal, isSignInCode, newSignInCode, SIGN_IN_CODE, signInCodeMail } from './sign-in-code-rules';
import { sha256 } from './tokens';

/** The one answer to every failed code: it never tells an unknown e-mail from a wrong, used or expired code. */
function wrongCode(lastAttempt = false): ServiceError {
  return new ServiceError(
    'UNAUTHORIZED',
    lastAttempt ? 'Wrong code, and that was its last attempt; ask for a new code.' : 'Wrong or expired code; check it, or ask for a new one.',
  );
}

/**
 * Signing in with a six-digit code sent by e-mail (the spec's limits: valid 10 minutes, 5 attempts, 3 codes per
 * e-mail per 10 minutes, 10 per day). A request answers the same whether the e-mail has an account or not, and the
 * mail leaves after the answer, so neither the reply nor its timing says which e-mails have one.
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

  methods(): { password: true; sign_in_code: boolean } {
    return { password: true, sign_in_code: this.mailer.enabled };
  }

  async request(input: { email?: unknown }, address: string): Promise<{ expires_at: string }> {
    await this.limits.beforeSignIn(address, input.email);
    if (typeof input.email !== 'string' || !EMAIL_PATTERN.test(input.email)) {
      throw new ServiceError('INVALID_REQUEST', 'The e-mail is not valid.', [{ path: 'email', message: 'must be an e-mail address' }]);
    }
    if (!this.mailer.enabled) {
      throw new ServiceError('SERVICE_UNAVAILABLE', 'Sign-in codes are not available: this installation sends no e-mail. Sign in with your password.');
    }
    const email = input.email.toLowerCase();
    const emailHash = sha256(email);
    // Refused before the code is hashed (scrypt costs what a password does), then counted again under the lock.
    await this.refuseOverLimits(this.db.manager, emailHash);
    const code = newSignInCode();
    const codeHash = await this.passwords.hash(code);
    const expiresAt = new Date(Date.now() + SIGN_IN_CODE.validMinutes * 60_000);
    const userId = await this.db.transaction(async (tx) => {
      // One e-mail's requests queue here, so that concurrent ones cannot all pass the count.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sign-in-codes:${emailHash}`]);
      await this.refuseOverLimits(tx, emailHash);
      const [user] = (await tx.query('SELECT id FROM users WHERE email = $1', [email])) as Array<{ id: string }>;
      // A new code replaces the ones before it.
      await tx.query(`UPDATE sign_in_codes SET expires_at = now() WHERE email_hash = $1 AND used_at IS NULL AND expires_at > now()`, [emailHash]);
      await tx.query('INSERT INTO sign_in_codes (id, email_hash, user_id, code_hash, expires_at) VALUES ($1, $2, $3, $4, $5)', [
        randomUUID(),
        emailHash,
        user?.id ?? null,
        codeHash,
        expiresAt,
      ]);
      return user?.id ?? null;
    });
    if (userId !== null) {
      const mail = signInCodeMail(code, this.config.appUrl);
      this.mailer.send({ to: email, ...mail }).catch((error: unknown) => this.logger.error({ err: error, userId }, 'could not send a sign-in code'));
    }
    return { expires_at: expiresAt.toISOString() };
  }

  private async refuseOverLimits(manager: EntityManager, emailHash: string): Promise<void> {
    const sent = (await manager.query(`SELECT created_at FROM sign_in_codes WHERE email_hash = $1 AND created_at > now() - interval '1 day'`, [
      emailHash,
    ])) as Array<{ created_at: Date }>;
    const refusal = codeRequestRefusal(
      sent.map((row) => row.created_at),
      new Date(),
    );
    if (refusal) {
      const limit = refusal.window === 'day' ? `${SIGN_IN_CODE.perDay} a day` : `${SIGN_IN_CODE.perTenMinutes} every 10 minutes`;
      throw rateLimited(`Too many sign-in codes for this e-mail (${limit})`, refusal.retryAfterSeconds);
    }
  }

  async verify(input: { email?: unknown; code?: unknown }, address: string): Promise<SignedIn> {
    await this.limits.beforeSignIn(address, input.email);
    if (typeof input.email !== 'string' || !isSignInCode(input.code)) throw wrongCode();
    const emailHash = sha256(input.email.toLowerCase());
    // The attempt is counted before the code is compared, in one statement: concurrent guesses queue on the row,
    // and none gets past the fifth.
    const [taken] = rowsReturned<{ id: string; code_hash: string; attempts: number }>(
      await this.db.query(
        `UPDATE sign_in_codes SET attempts = attempts + 1
          WHERE id = (SELECT id FROM sign_in_codes WHERE email_hash = $1 AND used_at IS NULL AND expires_at > now() ORDER BY created_at DESC LIMIT 1)
            AND attempts < $2
          RETURNING id, code_hash, attempts`,
        [emailHash, SIGN_IN_CODE.attempts],
      ),
    );
    if (!taken) {
      await this.passwords.verifyNothing(input.code);
      throw wrongCode();
    }
    if (!(await this.passwords.verify(input.code, taken.code_hash))) throw wrongCode(taken.attempts >= SIGN_IN_CODE.attempts);
    // Spent once, by whichever right attempt gets here first; a code sent to an e-mail without an account (no mail
    // left then) has no user to sign in.
    const [user] = rowsReturned<{ id: string; email: string; name: string }>(
      await this.db.query(
        `UPDATE sign_in_codes c SET used_at = now() FROM users u
          WHERE c.id = $1 AND c.used_at IS NULL AND u.id = c.user_id
          RETURNING u.id, u.email, u.name`,
        [taken.id],
      ),
    );
    if (!user) throw wrongCode();
    return this.sessions.openSession(user);
  }
}
