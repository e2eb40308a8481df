import { ServiceError } from '@ds/contracts';
import { EntityManager } from 'typeorm';
import { Mailer } from '../mail/mailer';

/**
 * Where the installation sends e-mail, an account joins a workspace (by invitation or by an Admin) and owns one that
 * may hold a paid plan only once its address is proven: otherwise whoever signed up first under someone's address
 * would be let into what was meant for its owner. Without e-mail nothing can be proven and nothing is asked.
 * Throws `refusal(...)` for an unproven address; a user that does not exist passes, for the caller to answer.
 */
export async function requireVerifiedAddress(
  manager: EntityManager,
  mailer: Mailer | undefined,
  userId: string,
  refusal: Refusal,
  message: string,
): Promise<void> {
  if (!mailer?.enabled) return;
  const [user] = (await manager.query('SELECT email_verified_at FROM users WHERE id = $1', [userId])) as Array<{ email_verified_at: Date | null }>;
  if (user && user.email_verified_at === null) throw refusal(message, { reason: 'email_unverified' });
}

type Refusal = (message: string, details: { reason: 'email_unverified' }) => ServiceError;

export const conflict: Refusal = (message, details) => new ServiceError('CONFLICT', message, details);
export const forbidden: Refusal = (message, details) => new ServiceError('FORBIDDEN', message, details);
