/**
 * Gives the event loop a turn. Serving and training share one thread (and one GPUDevice), so
 * long loops yield between steps: a generation request arriving during a training step is
 * then served between two micro-batches instead of after the whole step.
 */
export function yieldToEventLoop(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((r) => setImmediate(r));
  // MessageChannel is not clamped like nested setTimeout(0) in browsers.
  return new Promise((r) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      r();
    };
    ch.port2.postMessage(null);
  });
}
