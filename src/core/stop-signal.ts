/**
 * A one-shot abort signal for the gateway's own wiring: what an AbortSignal is to its listeners (`aborted`,
 * `reason`, 'abort' listeners heard once, and removable), without being an EventTarget. Node builds an
 * AbortSignal's EventTarget state when its `signal` is first read, about 3 us of CPU a signal under load,
 * and adds and removes each listener through that machinery (docs/performance.md, thirteenth session).
 * Listeners run in the order added, synchronously within `abort`, each once however often it was added; one
 * removed while `abort` runs is not called. A listener that throws does not stop the others, nor `abort`'s
 * caller: its error is reported as an AbortSignal's would be, as an uncaught exception (on a microtask).
 */
/**
 * What code that can be stopped reads of its stop signal. An AbortSignal has it, and so does StopSignal,
 * which costs a fraction of one: Node builds an AbortSignal's event machinery per signal, and adds and
 * removes each listener through it (docs/performance.md, issue 20).
 */
export interface StopSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once: true }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class StopSignal implements StopSignalLike {
  aborted = false;
  reason: unknown = undefined;
  private readonly listeners = new Set<() => void>();

  addEventListener(_type: 'abort', listener: () => void, _options?: { once: true }): void {
    if (!this.aborted) this.listeners.add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.delete(listener);
  }

  /** Aborts once, with `reason`; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    // A Set's iteration skips what is deleted before it is reached: a listener removed meanwhile is not called.
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.listeners.clear();
  }
}
