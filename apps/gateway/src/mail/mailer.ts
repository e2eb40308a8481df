import { createTransport, Transporter } from 'nodemailer';
import { Logger } from '@ds/platform';

export const MAILER = Symbol('mailer');

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

/** E-mail out through SMTP_URL; without it `enabled` is false and nothing is ever sent. */
export interface Mailer {
  readonly enabled: boolean;
  send(mail: OutgoingMail): Promise<void>;
}

export function openMailer(smtpUrl: string | null, from: string, logger: Logger): Mailer {
  if (smtpUrl === null) {
    return {
      enabled: false,
      send: () => Promise.reject(new Error('no SMTP_URL: this installation sends no e-mail')),
    };
  }
  const transport: Transporter = createTransport(smtpUrl, { from });
  logger.info({ host: new URL(smtpUrl).host }, 'e-mail goes out through SMTP');
  return {
    enabled: true,
    send: async (mail) => {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}
