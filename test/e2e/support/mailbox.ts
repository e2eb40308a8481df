import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server on loopback that keeps every message it accepts as a file in `dir` (the cluster is started
 * once, in another process than the tests, so the tests read the mail from disk).
 */
export async function startMailbox(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  mkdirSync(dir, { recursive: true });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase());
        writeFileSync(join(dir, `${Date.now()}-${randomBytes(4).toString('hex')}.json`), JSON.stringify({ to, raw: Buffer.concat(chunks).toString('utf8') }));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface ReceivedMail {
  subject: string;
  text: string;
  from: string;
}

/** Every message the shared cluster sent to `address`, oldest first. */
export async function mailTo(address: string): Promise<ReceivedMail[]> {
  const dir = process.env.E2E_MAIL_DIR!;
  const mails: ReceivedMail[] = [];
  for (const file of readdirSync(dir).sort()) {
    const stored = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { to: string[]; raw: string };
    if (!stored.to.includes(address.toLowerCase())) continue;
    const parsed = await simpleParser(stored.raw);
    mails.push({ subject: parsed.subject ?? '', text: parsed.text ?? '', from: parsed.from?.text ?? '' });
  }
  return mails;
}

/** Waits (a bounded number of tries) until `address` has received `count` messages; answers them. */
export async function waitForMail(address: string, count = 1): Promise<ReceivedMail[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const mails = await mailTo(address);
    if (mails.length >= count) return mails;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${address} received fewer than ${count} messages`);
}
