import { parentPort } from 'node:worker_threads';
import { LabTask, runLabTask } from './lab-tasks';

// One task at a time: the pool hands a thread its next task only after this one answered.
parentPort!.on('message', (task: LabTask) => {
  try {
    parentPort!.postMessage({ ok: true, result: runLabTask(task) });
  } catch (error) {
    parentPort!.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
