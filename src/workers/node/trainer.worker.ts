/** Serve's trainer thread: a TrainerHost on the worker's port (trainer-thread.ts starts it). */
import { parentPort, workerData } from 'node:worker_threads';
import { failure, TrainerHost } from './trainer-host';
import type { TrainerInit, TrainerReply, TrainerRequest } from './trainer-protocol';

const port = parentPort!;
const post = (reply: TrainerReply) => port.postMessage(reply);
try {
  const host = await TrainerHost.load(workerData as TrainerInit);
  port.on('message', (request: TrainerRequest) => void host.handle(request, post));
  post({ type: 'ready' });
} catch (e) {
  post(failure(null, e));
}
