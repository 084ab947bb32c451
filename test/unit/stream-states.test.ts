import { describe, expect, it } from 'vitest';
import { StreamStates, type StreamState } from '../../src/completions/streaming.js';

const walk = (...steps: StreamState[]): StreamStates => {
  const s = new StreamStates();
  for (const step of steps) s.to(step);
  return s;
};

describe('StreamStates', () => {
  it('follows open -> relaying -> ending -> closed, or open -> closed when no target accepted', () => {
    expect(walk('relaying', 'ending', 'closed').state).toBe('closed');
    expect(walk('closed').state).toBe('closed');
  });

  it.each<[StreamState[], StreamState]>([
    [[], 'ending'],
    [['relaying'], 'closed'],
    [['relaying'], 'relaying'],
    [['relaying', 'ending'], 'relaying'],
    [['relaying', 'ending', 'closed'], 'ending'],
    [['closed'], 'relaying'],
  ])('refuses %j then %s', (before, next) => {
    const s = walk(...before);
    expect(() => s.to(next)).toThrow(/not allowed/);
  });
});
