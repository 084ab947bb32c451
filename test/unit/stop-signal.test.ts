import { describe, expect, it } from 'vitest';
import { StopSignal } from '../../src/core/stop-signal.js';

describe('StopSignal', () => {
  it('aborts once, telling each listener still there once, in order, with the first reason', () => {
    const signal = new StopSignal();
    const heard: string[] = [];
    const a = (): void => void heard.push(`a:${String(signal.reason)}`);
    const b = (): void => void heard.push('b');
    const c = (): void => void heard.push('c');
    signal.addEventListener('abort', a, { once: true });
    signal.addEventListener('abort', b, { once: true });
    signal.addEventListener('abort', c, { once: true });
    signal.removeEventListener('abort', b);
    signal.removeEventListener('abort', b);
    expect(signal.aborted).toBe(false);
    signal.abort('client gone');
    signal.abort('shutdown');
    expect(heard).toEqual(['a:client gone', 'c']);
    expect(signal).toMatchObject({ aborted: true, reason: 'client gone' });
  });

  it('never calls a listener added after it aborted (the caller checks `aborted` first, as with an AbortSignal)', () => {
    const signal = new StopSignal();
    signal.abort(new Error('x'));
    let called = false;
    signal.addEventListener('abort', () => (called = true), { once: true });
    signal.abort(new Error('y'));
    expect(called).toBe(false);
    expect((signal.reason as Error).message).toBe('x');
  });

  it('calls a listener added twice once, skips one removed while it aborts, and runs the rest when one throws', async () => {
    const signal = new StopSignal();
    const heard: string[] = [];
    const twice = (): void => void heard.push('twice');
    const late = (): void => void heard.push('late');
    signal.addEventListener('abort', twice);
    signal.addEventListener('abort', twice);
    signal.addEventListener('abort', () => {
      heard.push('remover');
      signal.removeEventListener('abort', late);
    });
    signal.addEventListener('abort', () => {
      throw new Error('listener bug');
    });
    signal.addEventListener('abort', late);
    signal.addEventListener('abort', () => void heard.push('after the throw'));
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown): void => void uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      expect(() => signal.abort('x')).not.toThrow();
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(heard).toEqual(['twice', 'remover', 'after the throw']);
    expect(uncaught.map((e) => (e as Error).message)).toEqual(['listener bug']);
  });
});
