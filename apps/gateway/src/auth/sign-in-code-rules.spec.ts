import { codeRequestRefusal, isSignInCode, newSignInCode, codeMail } from './sign-in-code-rules';

const now = new Date('2026-11-26T12:00:00.000Z');
const minutesAgo = (...minutes: number[]) => minutes.map((m) => new Date(now.getTime() - m * 60_000));

describe('sign-in codes', () => {
  it('are six digits, leading zeros kept', () => {
    for (let i = 0; i < 200; i++) expect(newSignInCode()).toMatch(/^\d{6}$/);
    expect(isSignInCode('012345')).toBe(true);
    for (const bad of ['12345', '1234567', '12a456', ' 123456', 123456, null]) expect(isSignInCode(bad)).toBe(false);
  });

  it('allow three in ten minutes, and say when the next may be sent', () => {
    expect(codeRequestRefusal([], now)).toBeNull();
    expect(codeRequestRefusal(minutesAgo(1, 2), now)).toBeNull();
    expect(codeRequestRefusal(minutesAgo(1, 2, 9), now)).toEqual({ window: 'ten_minutes', retryAfterSeconds: 60 });
    // Order does not matter, and codes older than ten minutes do not count here.
    expect(codeRequestRefusal(minutesAgo(9, 1, 2, 11, 30), now)).toEqual({ window: 'ten_minutes', retryAfterSeconds: 60 });
    expect(codeRequestRefusal(minutesAgo(1, 2, 10), now)).toBeNull();
    // Four in the window (sent before a limit change, or raced): the third newest must leave first.
    expect(codeRequestRefusal(minutesAgo(1, 2, 3, 4), now)).toEqual({ window: 'ten_minutes', retryAfterSeconds: 7 * 60 });
  });

  it('allow ten a day', () => {
    const spread = minutesAgo(20, 60, 120, 180, 240, 300, 360, 420, 480, 1380);
    expect(codeRequestRefusal(spread, now)).toEqual({ window: 'day', retryAfterSeconds: 60 * 60 });
    expect(codeRequestRefusal(minutesAgo(20, 60, 120, 180, 240, 300, 360, 420, 480, 1440), now)).toBeNull();
  });

  it('never wait less than a second, and ignore times in the future', () => {
    expect(codeRequestRefusal([new Date(now.getTime() - 599_999), ...minutesAgo(1, 2)], now)).toEqual({ window: 'ten_minutes', retryAfterSeconds: 1 });
    expect(codeRequestRefusal([new Date(now.getTime() + 60_000), ...minutesAgo(1, 2)], now)).toBeNull();
  });

  it('are mailed with the code, its lifetime and where to use it', () => {
    const mail = codeMail('sign_in', '042917', 'https://app.example.com');
    expect(mail.subject).toContain('042917');
    expect(mail.text).toContain('042917');
    expect(mail.text).toContain('10 minutes');
    expect(mail.text).toContain('https://app.example.com/sign-in');
  });

  it('say what each kind of code is for', () => {
    const reset = codeMail('password_reset', '000123', 'https://app.example.com');
    expect(reset.subject).toBe('Your password reset code: 000123');
    expect(reset.text).toContain('signs you out everywhere else');
    const verify = codeMail('verify_email', '999999', 'https://app.example.com');
    expect(verify.subject).toBe('Your verification code: 999999');
    expect(verify.text).toContain('ends their sessions and removes their password');
  });
});
