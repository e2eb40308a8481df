import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { RESPONSE_BODY_LIMIT, secretRedactor } from '@ds/webhooks';
import { say } from './bench-support';

/**
 * `npm run bench:redaction`: how long redacting one kept answer takes, on the largest body a delivery keeps
 * (RESPONSE_BODY_LIMIT) and on bodies built to be the worst case: every character part of a secret's run, every
 * character an escape to decode, near misses everywhere. Sizes 8 times and 64 times the limit show the time grows
 * with the body, not faster. Each figure is the median of REPEATS runs after a warm-up; compiling the secrets (once
 * per attempt) is measured apart, with the most a request can carry.
 */

const REPEATS = 200;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timeMs(run: () => unknown, repeats = REPEATS): number {
  for (let i = 0; i < 20; i++) run();
  const samples: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const start = process.hrtime.bigint();
    run();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

function fill(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function main(): void {
  say(`redaction bench: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(1)}; body limit ${RESPONSE_BODY_LIMIT} bytes; median of ${REPEATS}`);
  const token = `crm/Tok+en/${randomBytes(24).toString('base64url')}`;
  const signing = `whsec_${randomBytes(32).toString('base64')}`;
  const signatures = [randomBytes(32).toString('hex'), randomBytes(32).toString('base64')];
  const secrets = [token, signing, ...signatures];
  const redact = secretRedactor(secrets);
  const bodies: Array<[string, (size: number) => string]> = [
    ['JSON with no secret', (size) => fill(JSON.stringify({ id: 'evt_123', status: 'ok', note: 'nothing to see here' }), size)],
    ['the secret echoed in every spelling, repeated', (size) => fill(everySpelling(token), size)],
    ['the secret itself, back to back (every character redacted)', (size) => fill(token, size)],
    ['near misses: runs of 7 of the secret', (size) => fill(`${token.slice(0, 7)} ${token.slice(7, 14)} `, size)],
    ['every character a \\u escape', (size) => fill(`\\u0041\\u002f`, size)],
    ['every character a URL escape of a 4-byte UTF-8 character', (size) => fill('%F0%9F%98%80', size)],
    ['+ for spaces and escapes mixed', (size) => fill('a+b%2Fc\\/d+', size)],
  ];
  say('');
  say('| body | 8 KiB | 64 KiB | 512 KiB |');
  say('|---|---|---|---|');
  for (const [name, make] of bodies) {
    const figures = [1, 8, 64].map((times) => {
      const text = make(RESPONSE_BODY_LIMIT * times);
      return `${timeMs(() => redact(text), times === 64 ? 20 : REPEATS).toFixed(2)} ms`;
    });
    say(`| ${name} | ${figures.join(' | ')} |`);
  }
  const short = 'aaaaa1';
  const withShort = secretRedactor([...secrets, short]);
  const shortBody = fill('aaaa', RESPONSE_BODY_LIMIT);
  say('');
  say(`a 6-character secret (matched whole), 8 KiB of its first letters: ${timeMs(() => withShort(shortBody)).toFixed(2)} ms`);
  // The most a request can carry: 20 destination headers, each a 4,096-character workspace secret, two signing secrets.
  const most = [...Array.from({ length: 20 }, () => randomBytes(3_072).toString('base64')), signing, signing.replace('whsec_', 'whsec_x'), ...signatures];
  say('');
  say(`compiling the request's secrets: typical (${secrets.length}) ${timeMs(() => secretRedactor(secrets)).toFixed(2)} ms;`);
  const compiled = secretRedactor(most);
  say(
    `  the most (${most.length}, 20 of 4,096 characters) ${timeMs(() => secretRedactor(most), 20).toFixed(1)} ms, then an 8 KiB echo of them ${timeMs(() => compiled(fill(most[0]!, RESPONSE_BODY_LIMIT)), 50).toFixed(2)} ms`,
  );
}

function everySpelling(value: string): string {
  const bytes = Buffer.from(value);
  return (
    JSON.stringify({
      plain: value,
      upper: value.toUpperCase(),
      url: encodeURIComponent(value),
      base64: bytes.toString('base64'),
      base64url: bytes.toString('base64url'),
      hex: bytes.toString('hex'),
      halves: [value.slice(0, 12), value.slice(12)],
    }).replace(/\//g, '\\/') + '\n'
  );
}

main();
