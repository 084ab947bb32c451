import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../src/billing/token-estimate.js';
import type { FunctionTool } from '../../src/openai/chat-types.js';
import { createSandboxAdapter } from '../../src/providers/sandbox/adapter.js';
import { simulateCompletion, type SimulationInput } from '../../src/providers/sandbox/simulator.js';
import { chatRequest, collect, eachEvent, deltas, finishReasons, text, upstreamCall, upstreamFailure, usages } from './helpers/calls.js';

const INSTANT = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
const TOOLS: FunctionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'get_time' } },
];

function input(prompt: string, extra: Partial<SimulationInput> = {}): SimulationInput {
  return { messages: [{ role: 'user', content: prompt }], max_tokens: null, ...extra };
}

describe('sandbox simulator', () => {
  it('answers the same input the same way, and differently when prompt, model or seed change', () => {
    const a = simulateCompletion(input('What is a gateway?'), 'sandbox-fast');
    expect(simulateCompletion(input('What is a gateway?'), 'sandbox-fast')).toEqual(a);
    const others = [
      simulateCompletion(input('What is a router?'), 'sandbox-fast'),
      simulateCompletion(input('What is a gateway?'), 'sandbox-smart'),
      simulateCompletion(input('What is a gateway?', { seed: 7 }), 'sandbox-fast'),
    ];
    for (const o of others) expect(o.message.content).not.toBe(a.message.content);
  });

  it('keys on the last user message only', () => {
    const base = simulateCompletion(input('Hello'), 'm');
    const withHistory = simulateCompletion(
      { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Hello' }] }], max_tokens: null },
      'm',
    );
    expect(withHistory.message.content).toBe(base.message.content);
  });

  it('writes 12 to 120 word pieces, one token each, ending a sentence', () => {
    for (let i = 0; i < 300; i++) {
      const sim = simulateCompletion(input(`prompt ${i}`), 'sandbox-fast');
      const pieces = sim.tokenDeltas.map((d) => d.content ?? '');
      expect(pieces.length).toBeGreaterThanOrEqual(12);
      expect(pieces.length).toBeLessThanOrEqual(120);
      expect(sim.usage.completionTokens).toBe(pieces.length);
      expect(pieces.join('')).toBe(sim.message.content);
      expect(pieces.slice(1).every((p) => p.startsWith(' '))).toBe(true);
      expect(sim.message.content).toMatch(/^[A-Z].*\.$/);
      expect(sim.finishReason).toBe('stop');
    }
  });

  it('never writes more than max_tokens, and then finishes with length', () => {
    for (const max of [1, 5, 11]) {
      const sim = simulateCompletion(input('Tell me everything.', { max_tokens: max }), 'm');
      expect(sim.usage.completionTokens).toBe(max);
      expect(sim.tokenDeltas).toHaveLength(max);
      expect(sim.finishReason).toBe('length');
    }
    expect(simulateCompletion(input('Tell me everything.', { max_tokens: 500 }), 'm').finishReason).toBe('stop');
  });

  it('reports prompt tokens equal to the gateway estimate', () => {
    const messages = [
      { role: 'system' as const, content: 'You are a helpful assistant.' },
      { role: 'user' as const, content: 'Summarize: ' + 'lorem ipsum '.repeat(40) },
    ];
    const sim = simulateCompletion({ messages, max_tokens: null, tools: TOOLS }, 'm');
    expect(sim.usage.promptTokens).toBe(estimatePromptTokens(messages, TOOLS));
  });

  it('calls the named function, or the first tool when a call is required', () => {
    const named = simulateCompletion(input('weather?', { tools: TOOLS, tool_choice: { type: 'function', function: { name: 'get_time' } } }), 'm');
    expect(named.finishReason).toBe('tool_calls');
    expect(named.message.content).toBeNull();
    expect(named.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_[A-Za-z0-9]{24}$/) as unknown, type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    expect(simulateCompletion(input('weather?', { tools: TOOLS, tool_choice: { type: 'function', function: { name: 'get_time' } } }), 'm')).toEqual(named);
    const required = simulateCompletion(input('weather?', { tools: TOOLS, tool_choice: 'required' }), 'm');
    expect(required.message.tool_calls?.[0]?.function.name).toBe('get_weather');
    expect(simulateCompletion(input('weather?', { tools: TOOLS, tool_choice: 'auto' }), 'm').finishReason).toBe('stop');
  });
});

describe('sandbox in-process adapter', () => {
  it('streams the simulated answer with role, finish and usage', async () => {
    const adapter = createSandboxAdapter({ pace: INSTANT });
    expect(adapter).toMatchObject({ name: 'sandbox', paid: false });
    const call = upstreamCall('sandbox-fast');
    const sim = simulateCompletion(call.request, 'sandbox-fast');
    const events = await collect(await adapter.stream(call));
    expect(deltas(events)[0]?.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(text(events)).toBe(sim.message.content);
    expect(finishReasons(events)).toEqual([sim.finishReason]);
    expect(usages(events)).toEqual([sim.usage]);
    expect(await adapter.complete(call)).toEqual({ message: sim.message, finishReason: sim.finishReason, usage: sim.usage, model: 'sandbox-fast' });
    expect(adapter.stats()).toEqual({ requests: 2, inFlight: 0 });
  });

  it('streams a tool call', async () => {
    const call = upstreamCall('m', { tools: TOOLS, tool_choice: 'required' });
    const events = await collect(await createSandboxAdapter({ pace: INSTANT }).stream(call));
    const args = deltas(events).flatMap((d) => d.delta.tool_calls ?? []).map((t) => t.function?.arguments ?? '').join('');
    expect(args).toBe('{}');
    expect(finishReasons(events)).toEqual(['tool_calls']);
  });

  it('roughly respects the pace', async () => {
    const adapter = createSandboxAdapter({ pace: { timeToFirstTokenMs: 80, tokensPerSecond: 100 } });
    const start = performance.now();
    let first = 0;
    for await (const e of eachEvent(await adapter.stream(upstreamCall('m', { max_tokens: 20 })))) {
      if (first === 0 && e.type === 'delta') first = performance.now() - start;
    }
    const total = performance.now() - start;
    expect(first).toBeGreaterThanOrEqual(75);
    expect(first).toBeLessThan(200);
    // 80 ms, then 19 more tokens 10 ms apart.
    expect(total).toBeGreaterThanOrEqual(260);
    expect(total).toBeLessThan(600);
  });

  it('yields to the event loop when unpaced', async () => {
    const adapter = createSandboxAdapter({ pace: INSTANT });
    let tokensWhenTimerRan = -1;
    let tokens = 0;
    setTimeout(() => (tokensWhenTimerRan = tokens), 0);
    for await (const e of eachEvent(await adapter.stream(upstreamCall('m', { max_tokens: 100_000 })))) if (e.type === 'delta') tokens++;
    expect(tokensWhenTimerRan).toBeGreaterThanOrEqual(0);
    expect(tokensWhenTimerRan).toBeLessThan(tokens);
  });

  it('fails like the HTTP path for each injected fault', async () => {
    const adapter = createSandboxAdapter({ pace: INSTANT, faults: { type: 'status', status: 503 } });
    expect(await upstreamFailure(adapter.stream(upstreamCall('m')))).toMatchObject({ kind: 'http', status: 503, retryable: true });
    adapter.setFault({ type: 'cut_after_tokens', tokens: 3 });
    expect(await upstreamFailure(collect(await adapter.stream(upstreamCall('m'))))).toMatchObject({ kind: 'protocol' });
    adapter.setFault({ type: 'malformed_chunk', afterTokens: 0 });
    expect(await upstreamFailure(collect(await adapter.stream(upstreamCall('m'))))).toMatchObject({ kind: 'protocol' });
    adapter.setFault({ type: 'reset' });
    expect(await upstreamFailure(adapter.complete(upstreamCall('m')))).toMatchObject({ kind: 'connect', retryable: true });
    adapter.setFault({ type: 'reset', afterTokens: 2 });
    expect(await upstreamFailure(collect(await adapter.stream(upstreamCall('m'))))).toMatchObject({ kind: 'connect' });
    adapter.setFault({ type: 'stall_after_tokens', tokens: 2 });
    const stalled = await adapter.stream(upstreamCall('m', {}, AbortSignal.timeout(60)));
    expect(await upstreamFailure(collect(stalled))).toMatchObject({ kind: 'timeout' });
    adapter.setFault({ type: 'stall_before_first_token', headers: false });
    expect(await upstreamFailure(adapter.stream(upstreamCall('m', {}, AbortSignal.timeout(60))))).toMatchObject({ kind: 'timeout' });
    expect(adapter.stats().inFlight).toBe(0);
  });

  it('applies a fault only inside its after/times window', async () => {
    const adapter = createSandboxAdapter({ pace: INSTANT });
    adapter.setFault({ type: 'status', status: 500, after: 1, times: 2 });
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      outcomes.push(await adapter.complete(upstreamCall('m')).then(() => 'ok', () => 'fail'));
    }
    expect(outcomes).toEqual(['ok', 'fail', 'fail', 'ok']);
  });

  it('stops with aborted when the caller aborts', async () => {
    const controller = new AbortController();
    const adapter = createSandboxAdapter({ pace: { timeToFirstTokenMs: 0, tokensPerSecond: 200 } });
    const events = await adapter.stream({ request: chatRequest(), model: 'm', signal: controller.signal });
    let n = 0;
    const run = async (): Promise<void> => {
      for await (const e of eachEvent(events)) if (e.type === 'delta' && ++n === 3) controller.abort();
    };
    expect(await upstreamFailure(run())).toMatchObject({ kind: 'aborted' });
    expect(n).toBe(3);
  });
});
