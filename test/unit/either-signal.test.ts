import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { eitherSignal } from '../../src/core/either-signal.js';

describe('eitherSignal', () => {
  it('aborts when the first source does, with its reason, and ignores the second afterwards', () => {
    const a = new AbortController();
    const b = new AbortController();
    const either = eitherSignal(a.signal, b.signal);
    let heard = 0;
    either.addEventListener('abort', () => heard++);
    expect(either.aborted).toBe(false);
    a.abort('client gone');
    expect(either.aborted).toBe(true);
    expect(either.reason).toBe('client gone');
    b.abort('shutdown');
    expect(either.reason).toBe('client gone');
    expect(heard).toBe(1);
  });

  it('aborts when the second source does', () => {
    const a = new AbortController();
    const b = new AbortController();
    const either = eitherSignal(a.signal, b.signal);
    const reason = new Error('stop');
    b.abort(reason);
    expect(either.reason).toBe(reason);
  });

  it('is aborted at once when a source already is', () => {
    const a = new AbortController();
    a.abort('early');
    expect(eitherSignal(a.signal, new AbortController().signal).reason).toBe('early');
    const b = new AbortController();
    b.abort('late');
    expect(eitherSignal(new AbortController().signal, b.signal).reason).toBe('late');
  });

  it('leaves no listener on the other source once one aborted', () => {
    const a = new AbortController();
    const b = new AbortController();
    eitherSignal(a.signal, b.signal);
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(1);
    a.abort();
    expect(getEventListeners(b.signal, 'abort')).toHaveLength(0);
  });
});
