import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { LabTask, runLabTask } from './lab-tasks';

/**
 * Niceness of a lab thread. On Linux a priority set for pid 0 is the calling thread's alone, so on a busy machine
 * the process's own thread, answering live runs, wins the CPU over a fit. Elsewhere it may lower the whole
 * process or be refused; a refusal changes nothing else.
 */
const LAB_THREAD_NICE = 10;
if (process.platform === 'linux') {
  try {
    setPriority(0, LAB_THREAD_NICE);
  } catch {
    // Not allowed here: the thread runs at the process's priority.
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
