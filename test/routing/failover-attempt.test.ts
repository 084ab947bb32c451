/**
 * The output bound as failover applies it to a streamed attempt (src/providers/upstream-output-bound.ts,
 * src/routing/failover.ts): from the max_tokens the target is asked for, which the model's output limit may
 * lower, and the next target continues once an attempt goes past it; and what failover tells an attempt's
 * watch (the request's observation) of its reads and its end.
 */
import { describe, expect, it } from 'vitest';
import { Delivery } from '../../src/completions/delivery.js';
import { silentLogger } from '../../src/core/logger.js';
import { RequestObservation } from '../../src/observability/request-observation.js';
import { noTelemetry } from '../../src/observability/telemetry.js';
import type { AttemptWatch, EventBatches, ProviderAdapter, StreamEvent, WatchedBatches } from '../../src/providers/contract.js';
import type { ModelCapabilities } from '../../src/providers/model-capabilities.js';
import { capabilitiesFor } from '../../src/providers/model-capabilities.js';
import { withTargetParams, type ParamTarget } from '../../src/providers/target-params.js';
import { DEFAULT_DEADLINES } from '../../src/routing/deadlines.js';
import { FailoverStream } from '../../src/routing/failover.js';
import { TargetHealth } from '../../src/routing/health.js';
import type { Target } from '../../src/routing/router.js';

const chunk = (content: string): StreamEvent => ({ type: 'delta', delta: { content }, finishReason: null });

/** An adapter streaming `batches` batches of `size` characters each, recording the max_tokens it was asked for. */
function streaming(name: string, batches: number, size: number, asked: number[]): ProviderAdapter {
  return {
    name,
    protocol: 'openai-compatible',
    paid: false,
    complete: () => Promise.reject(new Error('streamed only')),
    stream: (call) => {
      asked.push(call.request.max_tokens);
      let i = 0;
      const events: EventBatches = {
        [Symbol.asyncIterator]: () => ({
          next: () => Promise.resolve(i++ < batches ? { done: false, value: [chunk('a'.repeat(size))] } : { done: true, value: undefined }),
          return: () => Promise.resolve({ done: true, value: undefined }),
        }),
      };
      return Promise.resolve(events);
    },
  };
}

function target(adapter: ProviderAdapter, maxOutputTokens: number | null): Target {
  const capabilities: ModelCapabilities = { ...capabilitiesFor('openai-compatible', 'm'), maxOutputTokens };
  const params: ParamTarget = { protocol: 'openai-compatible', model: 'm', capabilities };
  return { adapter: withTargetParams(adapter, params), params, model: 'm', deadlines: DEFAULT_DEADLINES, oneShot: false, health: new TargetHealth() };
}

/** A failover over `targets` for a request bounded at `maxTokens`, continuing after a partial answer. */
function failover(targets: readonly Target[], maxTokens = 100): FailoverStream {
  return new FailoverStream({
    targets,
    request: { model: 'svc-fast', messages: [{ role: 'user', content: 'hi' }], max_tokens: maxTokens, temperature: null, top_p: null, stream: true, include_usage: false },
    clientSignal: new AbortController().signal,
    requestDeadlineAt: performance.now() + 60_000,
    afterPartial: 'continue',
    countTokens: (text) => Math.ceil(text.length / 3),
    delivery: new Delivery(),
  });
}

async function drain(stream: FailoverStream): Promise<number> {
  let chars = 0;
  for (;;) {
    const r = await stream.next();
    if (r.done) return chars;
    for (const e of r.value) if (e.type === 'delta') chars += e.delta.content?.length ?? 0;
  }
}

describe('the output bound in failover', () => {
  it('bounds an attempt by the max_tokens its target was asked for, and the next target continues', async () => {
    const asked: number[] = [];
    // Asked for 100 (the model's limit), the first upstream streams 100 batches of 300 characters: about
    // 10,000 estimated tokens, past the allowance of 4 x 100 + 1,024 = 1,424 (but within 4 x 10,000 + 1,024).
    const first = target(streaming('first', 100, 300, asked), 100);
    const second = target(streaming('second', 1, 30, asked), null);
    const stream = failover([first, second], 10_000);
    await stream.open();
    const chars = await drain(stream);
    expect(asked[0]).toBe(100);
    expect(stream.attempts.map((a) => `${a.provider}:${a.outcome}`)).toEqual(['first:protocol', 'second:ok']);
    // The first attempt's text up to the bound (1,424 estimated tokens, about 4,272 characters), then the second's.
    expect(chars).toBeLessThanOrEqual(4_272 + 30);
    expect(chars).toBeGreaterThan(4_000);
  });
});

describe("an attempt's watch", () => {
  /** An adapter whose events carry a watch that records what it is told. */
  function watched(inner: ProviderAdapter, told: string[]): ProviderAdapter {
    const watch: AttemptWatch = {
      read: (waitedMs, batch) => void told.push(batch === null ? 'end' : `read ${batch.length}`),
      failed: (waitedMs, error) => void told.push(`failed ${error instanceof Error ? error.message.slice(0, 30) : String(error)}`),
      closed: () => void told.push('closed'),
    };
    return {
      ...inner,
      stream: async (call) => {
        const events = await inner.stream(call);
        const out: WatchedBatches = { [Symbol.asyncIterator]: () => events[Symbol.asyncIterator](), watch };
        return out;
      },
    };
  }

  it('hears each read, then the end of the answer', async () => {
    const told: string[] = [];
    const stream = failover([target(watched(streaming('a', 2, 10, []), told), null)]);
    await stream.open();
    await drain(stream);
    expect(told).toEqual(['read 1', 'read 1', 'end']);
  });

  it('hears that the attempt was closed between two reads (the client went away)', async () => {
    const told: string[] = [];
    const stream = failover([target(watched(streaming('a', 5, 10, []), told), null)]);
    await stream.open();
    await stream.next();
    await stream.close('client_closed');
    expect(told).toEqual(['read 1', 'closed']);
    expect(stream.attempts.map((a) => a.outcome)).toEqual(['client_closed']);
  });

  it('hears the output bound as the attempt\'s failure, once', async () => {
    const told: string[] = [];
    const stream = failover([target(watched(streaming('a', 100, 300, []), told), 100), target(streaming('b', 1, 10, []), null)]);
    await stream.open();
    await drain(stream);
    expect(told.filter((t) => t.startsWith('failed'))).toEqual(['failed upstream kept producing past m']);
    expect(told.at(-1)).toMatch(/^failed/);
  });

  it("counts a read's wait on the upstream even when the client left during it", async () => {
    // The request's own observation: what the gateway-overhead histogram and the access line subtract.
    const observation = new RequestObservation(noTelemetry, silentLogger, 'chat', 'req_1');
    let release: () => void = () => {};
    const stalled: ProviderAdapter = {
      ...streaming('a', 0, 0, []),
      stream: () =>
        Promise.resolve({
          [Symbol.asyncIterator]: () => ({
            next: () => new Promise<IteratorResult<readonly StreamEvent[]>>((_, reject) => (release = () => reject(new Error('closed')))),
            return: () => Promise.resolve({ done: true, value: undefined }),
          }),
        }),
    };
    const stream = failover(observation.attach('svc-fast', [target(stalled, null)]));
    await stream.open();
    const before = observation.upstreamMs;
    const reading = stream.next();
    await new Promise((r) => setTimeout(r, 200));
    await stream.close('client_closed');
    release();
    await reading;
    expect(observation.upstreamMs - before).toBeGreaterThanOrEqual(150);
  });
});
