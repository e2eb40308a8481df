import { randomInt } from 'node:crypto';

/** The spec's limits on sign-in codes. */
export const SIGN_IN_CODE = {
  digits: 6,
  validMinutes: 10,
  attempts: 5,
  perTenMinutes: 3,
  perDay: 10,
} as const;

const TEN_MINUTES_MS = 10 * 60_000;
const DAY_MS = 24 * 3_600_000;

/** Six random digits, leading zeros kept. */
export function newSignInCode(): string {
  return String(randomInt(0, 10 ** SIGN_IN_CODE.digits)).padStart(SIGN_IN_CODE.digits, '0');
}

export function isSignInCode(value: unknown): value is string {
  return typeof value === 'string' && new RegExp(`^\\d{${SIGN_IN_CODE.digits}}$`).test(value);
}

/**
 * Whether one more code may be sent to an e-mail that was sent codes at `sentAt` (any order): 3 in any 10
 * minutes and 10 in any 24 hours. A refusal says when the oldest code that counts leaves its window.
 */
export function codeRequestRefusal(sentAt: readonly Date[], now: Date): { window: 'ten_minutes' | 'day'; retryAfterSeconds: number } | null {
  const ages = sentAt.map((at) => now.getTime() - at.getTime()).filter((age) => age >= 0 && age < DAY_MS);
  const refusal = (window: 'ten_minutes' | 'day', windowMs: number, inWindow: number[]) => {
    // The oldest of the ones that fill the window is the first to leave it.
    const oldest = Math.max(...inWindow);
    return { window, retryAfterSeconds: Math.max(1, Math.ceil((windowMs - oldest) / 1000)) };
  };
  if (ages.length >= SIGN_IN_CODE.perDay) return refusal('day', DAY_MS, ages.sort((a, b) => a - b).slice(0, SIGN_IN_CODE.perDay));
  const recent = ages.filter((age) => age < TEN_MINUTES_MS).sort((a, b) => a - b);
  if (recent.length >= SIGN_IN_CODE.perTenMinutes) return refusal('ten_minutes', TEN_MINUTES_MS, recent.slice(0, SIGN_IN_CODE.perTenMinutes));
  return null;
}

/** What an e-mailed code is for: signing in, setting a new password, or proving the address of a signed-in account. */
export type CodePurpose = 'sign_in' | 'password_reset' | 'verify_email';

export function codeMail(purpose: CodePurpose, code: string, appUrl: string): { subject: string; text: string } {
  const valid = `It works once, for ${SIGN_IN_CODE.validMinutes} minutes`;
  const lines: Record<CodePurpose, { subject: string; text: string[] }> = {
    sign_in: {
      subject: `Your sign-in code: ${code}`,
      text: [
        `Your sign-in code is ${code}.`,
        '',
        `${valid}, at ${appUrl}/sign-in.`,
        'If you did not ask for it, ignore this e-mail: nobody can sign in without the code.',
      ],
    },
    password_reset: {
      subject: `Your password reset code: ${code}`,
      text: [
        `Your code to choose a new password is ${code}.`,
        '',
        `${valid}, at ${appUrl}/sign-in. Setting a new password signs you out everywhere else.`,
        'If you did not ask for it, ignore this e-mail: your password stays as it is.',
      ],
    },
    verify_email: {
      subject: `Your verification code: ${code}`,
      text: [
        `Your code to verify this e-mail address is ${code}.`,
        '',
        `${valid}. Enter it in the application (${appUrl}) where it asks for it.`,
        'If you did not ask for it, someone may have signed up with your address: sign in with a code at',
        `${appUrl}/sign-in to take the account over, which ends their sessions and removes their password.`,
      ],
    },
  };
  return { subject: lines[purpose].subject, text: lines[purpose].text.join('\n') };
}
