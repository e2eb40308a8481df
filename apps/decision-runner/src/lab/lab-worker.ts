import { execFileSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { LabTask, runLabTask } from './lab-tasks';

/**
 * A lab thread takes only CPU time that live runs leave idle. On Linux it asks for the SCHED_IDLE policy: the
 * scheduler then runs it only on an otherwise idle core, and any thread of a live run that wakes up takes the core
 * from it at once (a thread that is merely niced still holds the core for a slice, and a run crosses many processes,
 * each waking once per hop). `setpriority` on pid 0 lowers the calling thread alone, the fallback where `chrt` is
 * missing or refused. Under a machine saturated by live runs a fit slows down rather than slowing them; it still
 * gets the scheduler's minimal share, so it ends.
 */
const LAB_THREAD_NICE = 19;
if (process.platform === 'linux') {
  try {
    setPriority(0, LAB_THREAD_NICE);
  } catch {
    // Not allowed here: the thread runs at the process's priority.
  }
  try {
    const threadId = readlinkSync('/proc/thread-self').split('/').pop();
    if (threadId) execFileSync('chrt', ['--idle', '--pid', '0', threadId], { stdio: 'ignore', timeout: 5_000 });
  } catch {
    // No chrt, or the policy is refused: the niceness above stands.
  }
}

// One task at a time: the pool hands a thread its next task only after this one answered.
parentPort!.on('message', (task: LabTask) => {
  try {
    parentPort!.postMessage({ ok: true, result: runLabTask(task) });
  } catch (error) {
    parentPort!.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
