/**
 * A one-shot abort signal for the gateway's own wiring: what an AbortSignal is to its listeners (`aborted`,
 * `reason`, 'abort' listeners heard once, and removable), without being an EventTarget. Node builds an
 * AbortSignal's EventTarget state when its `signal` is first read, about 3 us of CPU a signal under load,
 * and adds and removes each listener through that machinery (docs/performance.md, thirteenth session). The
 * upstream call itself still gets a real AbortSignal (undici's and fetch's API), one per attempt.
 * Listeners run in the order added, synchronously within `abort`, and must not throw.
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
  private listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void, _options?: { once: true }): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at !== -1) this.listeners.splice(at, 1);
  }

  /** Aborts once, with `reason`; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    for (const listener of this.listeners.splice(0)) listener();
  }
}
