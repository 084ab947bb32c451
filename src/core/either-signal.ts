/**
 * A signal that aborts when either of two does, with the reason of the first: what `AbortSignal.any([a, b])`
 * gives, without its cost on Node 20, about 15 us a call (it registers weak references and a finalizer for
 * every source, kept for the garbage collector): one per completion, on the hot path.
 */
export function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const controller = new AbortController();
  if (a.aborted) {
    controller.abort(a.reason);
    return controller.signal;
  }
  if (b.aborted) {
    controller.abort(b.reason);
    return controller.signal;
  }
  const onA = (): void => {
    b.removeEventListener('abort', onB);
    controller.abort(a.reason);
  };
  const onB = (): void => {
    a.removeEventListener('abort', onA);
    controller.abort(b.reason);
  };
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return controller.signal;
}
