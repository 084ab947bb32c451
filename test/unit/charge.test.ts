/**
 * The charge table: every way a completion can end x (stream, non-stream) -> the exact credits, or void.
 * The delivery facts are built through the same Delivery record failover writes (src/completions/delivery.ts),
 * so each row is a script of what the upstreams did. Every new ending or path gets its row here.
 *
 * The "stream / non-stream" column is a label only: decideCharge takes no mode, and although ChargeInput
 * carries the ending, the rule reads only the delivery facts ("whatever the ending", src/billing/charge.ts).
 * A pair made by `both` is the same call twice; a row of one mode only differs from the others by its steps
 * (a splice after bytes happens only in a stream, a restart after bytes only without one). That each output
 * path records those facts for each ending, and so pays what the table says, is proved per mode end to end,
 * against a real upstream, in test/e2e/charge-endings.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { decideCharge, type Charge, type Ending } from '../../src/billing/charge.js';
import { creditCost } from '../../src/billing/pricing.js';
import { estimateDeliveredTokens } from '../../src/billing/token-estimate.js';
import { Delivery } from '../../src/completions/delivery.js';
import type { UpstreamTokens } from '../../src/providers/contract.js';

const PRICES = { inputCreditsPer1k: 25, outputCreditsPer1k: 75 };
const PROMPT_ESTIMATE = 1000;
const HELD = 100;

type Step =
  | { do: 'accept' }
  | { do: 'produce'; text: string }
  | { do: 'reason'; text: string }
  | { do: 'tool_call'; name: string; args: string }
  | { do: 'usage'; usage: UpstreamTokens }
  | { do: 'finish' }
  | { do: 'splice' }
  | { do: 'restart' };

const accept: Step = { do: 'accept' };
const finish: Step = { do: 'finish' };
const produce = (text: string): Step => ({ do: 'produce', text });
const usage = (promptTokens: number, completionTokens: number): Step => ({ do: 'usage', usage: { promptTokens, completionTokens } });
const details = (promptTokens: number, completionTokens: number, cachedTokens: number, reasoningTokens: number): Step => ({
  do: 'usage',
  usage: { promptTokens, completionTokens, cachedTokens, reasoningTokens },
});
const reason = (text: string): Step => ({ do: 'reason', text });

function deliver(steps: readonly Step[]): Delivery {
  const d = new Delivery();
  for (const s of steps) {
    if (s.do === 'accept') d.accept();
    else if (s.do === 'produce') d.produce({ content: s.text });
    else if (s.do === 'reason') d.produce({ reasoning_content: s.text });
    else if (s.do === 'tool_call') d.produce({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: s.name, arguments: s.args } }] });
    else if (s.do === 'usage') d.reportUsage(s.usage);
    else if (s.do === 'finish') d.produce({}, 'stop');
    else if (s.do === 'splice') d.splice();
    else d.restart();
  }
  return d;
}

/** Prompt estimate plus `completion` tokens at the table's prices, capped at the hold. */
const settle = (prompt: number, completion: number): Charge => {
  const cost = creditCost(PRICES, prompt, completion);
  return {
    kind: 'settle',
    credits: Math.min(cost, HELD),
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: 0,
    reasoningTokens: 0,
    shortfallCredits: Math.max(0, cost - HELD),
    source: 'estimate',
  };
};
const fromUpstream = (prompt: number, completion: number): Charge => ({ ...settle(prompt, completion), source: 'upstream' } as Charge);
const VOID: Charge = { kind: 'void' };

const est = (text: string, deltas: number): number => estimateDeliveredTokens(text, deltas);
const HELLO = ['Hello', ' there,', ' traveller'];
const helloSteps = HELLO.map(produce);
const helloTokens = est(HELLO.join(''), HELLO.length);

type Mode = 'stream' | 'non-stream';
type Row = [name: string, mode: Mode, ending: Ending, steps: Step[], expected: Charge];

const both = (name: string, ending: Ending, steps: Step[], expected: Charge): Row[] => [
  [name, 'stream', ending, steps, expected],
  [name, 'non-stream', ending, steps, expected],
];

const TABLE: Row[] = [
  // The answer finished: the upstream's own count, prompt and completion.
  ...both('completed with usage', 'completed', [accept, ...helloSteps, finish, usage(900, 120)], fromUpstream(900, 120)),
  ...both('completed, the upstream reported no usage', 'completed', [accept, ...helloSteps], settle(PROMPT_ESTIMATE, helloTokens)),
  ...both('completed with hidden reasoning tokens in the usage', 'completed', [accept, produce('42'), finish, usage(900, 800)], fromUpstream(900, 800)),
  ...both('completed with a tool call', 'completed', [accept, { do: 'tool_call', name: 'get_weather', args: '{"city":"Paris"}' }, finish, usage(900, 30)], fromUpstream(900, 30)),

  // The client hung up.
  ...both('client hang-up before any upstream answered', 'client_closed', [], VOID),
  ...both('client hang-up after the upstream answered, before its first byte', 'client_closed', [accept], settle(PROMPT_ESTIMATE, 0)),
  ...both('client hang-up after the first bytes', 'client_closed', [accept, ...helloSteps], settle(PROMPT_ESTIMATE, helloTokens)),
  ...both('client hang-up after the upstream finished (its usage arrived)', 'client_closed', [accept, ...helloSteps, finish, usage(900, 300)], fromUpstream(900, 300)),
  // Running totals (Gemini): what the provider counted so far, thinking included, or the text produced
  // since, whichever is more.
  ...both('client hang-up mid-answer after a running usage total', 'client_closed', [accept, produce('Hi'), usage(900, 5000), ...helloSteps], fromUpstream(900, 5000)),
  ...both('client hang-up after more text than the last running total', 'client_closed', [accept, usage(900, 1), ...helloSteps], settle(900, helloTokens)),

  // The upstreams failed.
  ...both('upstream error before any upstream answered', 'upstream_error', [], VOID),
  ...both('upstream error after an upstream answered, before bytes', 'upstream_error', [accept], settle(PROMPT_ESTIMATE, 0)),
  ['upstream error after bytes, nothing could continue', 'stream', 'upstream_error', [accept, ...helloSteps, { do: 'splice' }, accept], settle(PROMPT_ESTIMATE, helloTokens)],
  ['upstream error after bytes, nothing could restart', 'non-stream', 'upstream_error', [accept, ...helloSteps], settle(PROMPT_ESTIMATE, helloTokens)],
  [
    'failover splice: the secondary continued the stream',
    'stream',
    'completed',
    [accept, ...helloSteps, { do: 'splice' }, accept, produce(' and goodbye'), finish, usage(1040, 4)],
    settle(PROMPT_ESTIMATE, helloTokens + 4),
  ],
  [
    'failover restart: the secondary answered from the start',
    'non-stream',
    'completed',
    [accept, ...helloSteps, { do: 'restart' }, accept, produce('Hi'), finish, usage(900, 2)],
    fromUpstream(900, 2),
  ],
  ['failover before the first byte', 'stream', 'completed', [accept, { do: 'restart' }, accept, produce('Hi'), finish, usage(900, 2)], fromUpstream(900, 2)],

  // The gateway ended it.
  ...both('shutdown after the first bytes', 'shutdown', [accept, ...helloSteps], settle(PROMPT_ESTIMATE, helloTokens)),
  ...both('shutdown before any upstream answered', 'shutdown', [], VOID),
  ['slow reader: the write deadline ended the stream', 'stream', 'write_timeout', [accept, ...helloSteps], settle(PROMPT_ESTIMATE, helloTokens)],

  // Bad upstream usage: sanitized, never a settle that throws.
  ...both('negative usage', 'completed', [accept, ...helloSteps, finish, usage(-5, -1)], settle(PROMPT_ESTIMATE, helloTokens)),
  ...both('fractional usage', 'completed', [accept, ...helloSteps, finish, usage(900.5, 12.25)], settle(PROMPT_ESTIMATE, helloTokens)),
  ...both('NaN and unsafe usage', 'completed', [accept, ...helloSteps, finish, usage(Number.NaN, 2 ** 60)], settle(PROMPT_ESTIMATE, helloTokens)),
  ...both('safe but absurd usage (beyond any context window)', 'completed', [accept, ...helloSteps, finish, usage(900, 2 ** 52)], { ...settle(900, helloTokens), source: 'estimate' } as Charge),
  ['absurd usage after a splice: the sum stays postable', 'stream', 'completed', [accept, ...helloSteps, { do: 'splice' }, accept, produce('!'), finish, usage(900, Number.MAX_SAFE_INTEGER)], settle(PROMPT_ESTIMATE, helloTokens + est('!', 1))],
  ...both('a usable completion count beside an unusable prompt count', 'completed', [accept, ...helloSteps, finish, usage(-1, 7)], { ...settle(PROMPT_ESTIMATE, 7), source: 'upstream' } as Charge),

  // Usage beyond the hold: the hold is charged and the rest is the operator's shortfall.
  ...both('usage above the hold', 'completed', [accept, ...helloSteps, finish, usage(1000, 5000)], fromUpstream(1000, 5000)),

  // Cached and reasoning tokens: part of prompt and completion (charged as input and output), recorded apart.
  ...both('cached and reasoning tokens reported', 'completed', [accept, reason('Let me think'), ...helloSteps, finish, details(900, 120, 800, 100)], {
    ...fromUpstream(900, 120),
    cachedTokens: 800,
    reasoningTokens: 100,
  } as Charge),
  ...both('details larger than their totals are capped at them', 'completed', [accept, ...helloSteps, finish, details(900, 120, 5000, 700)], {
    ...fromUpstream(900, 120),
    cachedTokens: 900,
    reasoningTokens: 120,
  } as Charge),
  ...both('unusable details are 0', 'completed', [accept, ...helloSteps, finish, details(900, 120, -1, 0.5)], fromUpstream(900, 120)),
  // Reasoning text the client received is output the upstream billed: counted when no usage arrived.
  ...both('client hang-up during reasoning, no usage yet', 'client_closed', [accept, reason('Let me think about it')], settle(PROMPT_ESTIMATE, est('Let me think about it', 1))),
  [
    'failover splice after reasoning: the cached count of the last upstream is not the client\'s',
    'stream',
    'completed',
    [accept, reason('Hmm'), ...helloSteps, { do: 'splice' }, accept, produce('!'), finish, details(1040, 3, 1000, 2)],
    { ...settle(PROMPT_ESTIMATE, est('Hmm' + HELLO.join(''), HELLO.length + 1) + 3), reasoningTokens: 2 } as Charge,
  ],
];

describe('decideCharge', () => {
  it.each(TABLE)('%s (%s, %s)', (_name, _mode, ending, steps, expected) => {
    const charge = decideCharge({ prices: PRICES, promptEstimate: PROMPT_ESTIMATE, held: HELD, delivery: deliver(steps).facts(), ending });
    expect(charge).toEqual(expected);
    if (charge.kind === 'settle') {
      expect(Number.isSafeInteger(charge.credits)).toBe(true);
      expect(charge.credits).toBeGreaterThanOrEqual(0);
      expect(charge.credits).toBeLessThanOrEqual(HELD);
      expect(Number.isSafeInteger(charge.promptTokens) && Number.isSafeInteger(charge.completionTokens)).toBe(true);
    }
  });

  it('the usage-above-hold row records the shortfall', () => {
    const charge = decideCharge({
      prices: PRICES,
      promptEstimate: PROMPT_ESTIMATE,
      held: HELD,
      delivery: deliver([accept, usage(1000, 5000)]).facts(),
      ending: 'completed',
    });
    expect(charge).toMatchObject({ kind: 'settle', credits: HELD, shortfallCredits: creditCost(PRICES, 1000, 5000) - HELD });
  });

  it('covers every ending in both modes', () => {
    const endings: Ending[] = ['completed', 'upstream_error', 'client_closed', 'write_timeout', 'shutdown'];
    for (const ending of endings) {
      const modes = new Set(TABLE.filter((r) => r[2] === ending).map((r) => r[1]));
      // A non-streaming answer has no reader to be slow: the write deadline is a streaming ending only.
      expect([...modes].sort()).toEqual(ending === 'write_timeout' ? ['stream'] : ['non-stream', 'stream']);
    }
  });
});
