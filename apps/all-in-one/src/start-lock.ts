import { readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Launchers on one machine take this lock from the moment they choose ports until every port they chose is
 * bound. Choosing is "the usual port when it is free, else any free one", so two launchers started at once would
 * both find 54329 and 9400–9405 free and collide when the second binds; under the lock the second sees the first's
 * ports taken and moves on.
 */
export const START_LOCK_FILE = join(tmpdir(), `decision-service-all-in-one-${process.getuid?.() ?? 'user'}.lock`);

/**
 * Whether this start chooses a port itself: the embedded PostgreSQL's without EMBEDDED_POSTGRES_PORT, a
 * nats-server's without NATS_URL, the ops ports without OPS_PORT_BASE. A start given every port (as the test
 * harness and a deployment give them) need not wait for another launcher.
 */
export function choosesPorts(env: NodeJS.ProcessEnv, ports: { postgres: number | null; opsBase: number | null }): boolean {
  return ports.opsBase === null || (!env.DATABASE_URL && ports.postgres === null) || !env.NATS_URL;
}

const POLL_MS = 200;
/** A lock file without a readable pid this old was left by a launcher killed while writing it. */
const UNREADABLE_STALE_MS = 10_000;

export interface StartLockOptions {
  file?: string;
  /** Told once, with the holder's pid, when the lock is held by another launcher. */
  onWait?: (holder: number) => void;
  /** Gives up waiting (the launcher is stopping); the promise then rejects. */
  signal?: AbortSignal;
}

/** Takes the lock, waiting while another live launcher holds it; answers the function that releases it. */
export async function takeStartLock(options: StartLockOptions = {}): Promise<() => void> {
  const file = options.file ?? START_LOCK_FILE;
  let told = false;
  for (;;) {
    if (options.signal?.aborted) throw new Error('stopped while waiting for another launcher to finish starting');
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o644 });
      return releaser(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = lockHolder(file);
    if (holder === 'gone' || (holder === 'unreadable' && ageMs(file) > UNREADABLE_STALE_MS)) {
      // Left by a launcher that died before releasing it; whoever unlinks first retries the exclusive create.
      try {
        unlinkSync(file);
      } catch {
        // Another launcher removed it first.
      }
      continue;
    }
    if (typeof holder === 'number' && !told) {
      told = true;
      options.onWait?.(holder);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function releaser(file: string): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      // Only our own: a lock taken over after ours was (wrongly) judged stale stays its holder's.
      if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
    } catch {
      // Already gone.
    }
  };
}

/** The pid in the lock file, 'gone' when that process no longer exists, 'unreadable' when the file holds no pid yet. */
export function lockHolder(file: string): number | 'gone' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return 'gone';
  }
  const pid = Number(text);
  if (!/^\d+$/.test(text) || pid <= 0) return 'unreadable';
  try {
    process.kill(pid, 0);
    return pid;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? pid : 'gone';
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return Infinity;
  }
}
