import { createLogger } from '@ds/platform';
import { GatewayConfig } from '../config';
import { CredentialLimits } from '../limits/credential-limits';
import { openMailer } from '../mail/mailer';
import { PasswordHasher } from './passwords';
import { SessionsService } from './sessions.service';
import { SignInCodesService } from './sign-in-codes.service';

/** Without SMTP_URL nothing is written and nothing is promised: codes are not offered and a request is 503. */
describe('sign-in codes where no e-mail goes out', () => {
  const limitsChecked: string[] = [];
  const limits = { beforeSignIn: async (address: string) => void limitsChecked.push(address) } as unknown as CredentialLimits;
  // No database: the request must be refused before anything is read or written.
  const service = new SignInCodesService(
    undefined as never,
    new PasswordHasher(16_384),
    limits,
    openMailer(null, 'no-reply@example.com', createLogger('gateway', 'silent')),
    { appUrl: 'https://app.example.com' } as GatewayConfig,
    createLogger('gateway', 'silent'),
    undefined as unknown as SessionsService,
  );

  it('are not offered', () => {
    expect(service.methods()).toEqual({ password: true, sign_in_code: false, password_reset: false, email_verification: false });
  });

  it('answer 503 after the address and account limits, and 400 first for a malformed e-mail', async () => {
    await expect(service.request({ email: 'ana@example.com' }, '192.0.2.1')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    await expect(service.request({ email: 'nope' }, '192.0.2.2')).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(limitsChecked).toEqual(['192.0.2.1', '192.0.2.2']);
  });
});
