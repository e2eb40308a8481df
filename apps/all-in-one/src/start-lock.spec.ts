import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { choosesPorts, lockHolder, takeStartLock } from './start-lock';

describe('takeStartLock', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'start-lock-'));
    file = join(dir, 'launcher.lock');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a second taker wait, saying for whom, until the first releases', async () => {
    const release = await takeStartLock({ file });
    expect(readFileSync(file, 'utf8')).toBe(String(process.pid));
    const waitedFor: number[] = [];
    let second: (() => void) | null = null;
    const taking = takeStartLock({ file, onWait: (pid) => waitedFor.push(pid) }).then((r) => (second = r));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(second).toBeNull();
    expect(waitedFor).toEqual([process.pid]);
    release();
    await taking;
    expect(second).not.toBeNull();
    second!();
    expect(existsSync(file)).toBe(false);
  });

  it('takes over a lock left by a launcher that no longer runs', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    writeFileSync(file, dead);
    expect(lockHolder(file)).toBe('gone');
    const waitedFor: number[] = [];
    const release = await takeStartLock({ file, onWait: (pid) => waitedFor.push(pid) });
    expect(readFileSync(file, 'utf8')).toBe(String(process.pid));
    expect(waitedFor).toEqual([]);
    release();
  });

  it('leaves a lock it no longer holds to its holder, and stops waiting when asked', async () => {
    const release = await takeStartLock({ file });
    writeFileSync(file, '1');
    release();
    expect(readFileSync(file, 'utf8')).toBe('1');
    const controller = new AbortController();
    const waiting = takeStartLock({ file, signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toThrow('stopped while waiting');
  });
});

describe('choosesPorts', () => {
  const given = { DATABASE_URL: 'postgres://db', NATS_URL: 'nats://n:4222' };
  it('is false only when every port the launcher would choose is given', () => {
    expect(choosesPorts(given, { postgres: null, opsBase: 9500 })).toBe(false);
    expect(choosesPorts({ NATS_URL: given.NATS_URL }, { postgres: 5500, opsBase: 9500 })).toBe(false);
    expect(choosesPorts(given, { postgres: null, opsBase: null })).toBe(true);
    expect(choosesPorts({ NATS_URL: given.NATS_URL }, { postgres: null, opsBase: 9500 })).toBe(true);
    expect(choosesPorts({ DATABASE_URL: given.DATABASE_URL, NATS_URL: '' }, { postgres: null, opsBase: 9500 })).toBe(true);
  });
});
