/**
 * svc-auto's decisions on requests written for these tests (none of them is in the training data):
 * one or two of each kind the issue names, the tricky ones (code inside prose, a word problem without a
 * digit, a one-line "prove"), and whole conversations where the context, tools or the last turn decide.
 */
import { describe, expect, it } from 'vitest';
import { classifyRequest, type RoutableRequest } from '../../src/routing/auto/classifier.js';
import type { Tier } from '../../src/routing/auto/tier.js';
import { EVERYDAY_PROMPTS } from '../../scripts/router/everyday-prompts.js';
import { EVERYDAY_SET, readDataset, requestOf, REVIEW_SET } from '../../scripts/router/dataset.js';

const user = (content: string): RoutableRequest => ({ messages: [{ role: 'user', content }] });
const tierOf = (request: RoutableRequest | string, bias = 0.7): Tier =>
  classifyRequest(typeof request === 'string' ? user(request) : request, bias).tier;

describe('svc-auto classifier', () => {
  it.each([
    ['fast', 'Classify the sentiment of this tweet as positive, negative or neutral: "Worst. Delivery. Ever."'],
    ['fast', 'Extract every city mentioned: "We flew from Oslo to Rome, then took the train to Naples."'],
    ['fast', 'Summarize in one sentence: The museum will close for renovation from June to September, and reopen with a new wing for modern art.'],
    ['fast', 'Rewrite more politely: send me the file now.'],
    ['fast', 'Who discovered penicillin?'],
    ['fast', 'hey, good morning! how was your weekend?'],
    ['fast', 'Translate into Spanish: the meeting is postponed until Monday.'],
    ['code', 'Write a TypeScript function that debounces another function.'],
    ['code', 'Why does this throw?\n\n```js\nconst xs = null;\nxs.map((x) => x + 1);\n```'],
    ['code', 'SQL: count orders per customer in the last 30 days from orders(customer_id, created_at).'],
    ['smart', 'Prove that the product of two odd integers is odd.'],
    ['smart', 'Solve for x: 2x^2 - 8x + 6 = 0.'],
    ['smart', 'Plan a two-week study schedule for three exams on different days, with at most four hours of study per day and the hardest subject first.'],
    ['smart', 'Everyone who plays chess is patient. Some patient people are teachers. Must some chess players be teachers?'],
  ] as const)('sends a %s prompt to its tier: %s', (tier, prompt) => {
    expect(tierOf(prompt)).toBe(tier);
  });

  // Trained on the real-user prompts, among them many short Stack Overflow titles, a model sent these up a tier
  // (docs/routing.md, "Trained on them, or not"): the shipped one must not. One accepted exception: since the
  // written programming questions ("pandas merge two dataframes ..."), "pandas" reads as the Python library, so
  // the animal's fun facts go to svc-code (answered well, at the code tier's price; docs/routing.md).
  it('sends none of 41 short everyday prompts in seven languages above svc-fast, but the pandas one to svc-code', () => {
    expect(EVERYDAY_PROMPTS).toHaveLength(41);
    const upward = EVERYDAY_PROMPTS.filter((p) => tierOf(p) !== 'fast').map((p) => [p, tierOf(p)]);
    expect(upward).toEqual([['Tell me some fun facts about pandas', 'code']]);
  });

  // The same guard as a rate, on 386 everyday requests nothing was trained on, half of them with a word of
  // code, science or maths ("are pythons venomous", "what thread count is good for bed sheets"). A regression
  // floor just above the shipped model's 44 (11.4%), not a goal: docs/routing.md, "An everyday guard set".
  it('sends no more everyday requests of the guard set above svc-fast than the published figure', () => {
    const rows = readDataset(EVERYDAY_SET);
    expect(rows).toHaveLength(386);
    expect(rows.every((r) => r.tier === 'fast')).toBe(true);
    const upward = rows.filter((r) => classifyRequest(requestOf(r), 0.7).tier !== 'fast').length;
    expect(upward).toBeLessThanOrEqual(46);
  });

  // A regression floor on prompts nothing was trained on, written by a reviewer to find a retraining's regressions.
  it('routes the review set no worse than the published figures', () => {
    const rows = readDataset(REVIEW_SET);
    const got = rows.map((r) => classifyRequest(requestOf(r), 0.7).tier);
    const right = rows.filter((r, i) => got[i] === r.tier).length;
    const under = rows.filter((r, i) => r.tier !== 'fast' && got[i] === 'fast').length;
    const over = rows.filter((r, i) => r.tier === 'fast' && got[i] !== 'fast').length;
    expect(rows).toHaveLength(189);
    expect(right / rows.length).toBeGreaterThanOrEqual(0.905);
    expect(under).toBeLessThanOrEqual(5);
    expect(over).toBeLessThanOrEqual(10);
  });

  it('reads code inside prose as code', () => {
    const prompt =
      'So my colleague wrote this and now the nightly report is empty, I think the problem is somewhere here:\n\n' +
      '    for row in rows:\n        if row.total > limit:\n            continue\n        report.append(row)\n\n' +
      'and limit comes from the settings file. What is going on?';
    expect(tierOf(prompt)).toBe('code');
  });

  it('reads a word problem without digits as math', () => {
    expect(tierOf('A baker sells half of her loaves in the morning and a third of the rest in the afternoon, leaving ten. How many loaves did she bake?')).toBe('smart');
    expect(tierOf('Sam is three times as old as his daughter. In five years he will be twice her age. How old is she now?')).toBe('smart');
  });

  it('reads a one-line request to prove as smart', () => {
    expect(tierOf('prove it')).toBe('smart');
    expect(tierOf('Prove that √2 is irrational.')).toBe('smart');
  });

  it('follows the conversation: a terse follow-up inherits the work of earlier turns', () => {
    const followUp: RoutableRequest = {
      messages: [
        { role: 'user', content: 'Write a Python function that parses ISO dates.' },
        { role: 'assistant', content: '```python\nfrom datetime import date\n\ndef parse(s):\n    return date.fromisoformat(s)\n```' },
        { role: 'user', content: 'add error handling' },
      ],
    };
    expect(tierOf(followUp)).toBe('code');
  });

  it('lets the last turn decide when it is small talk after technical work', () => {
    const goodbye: RoutableRequest = {
      messages: [
        { role: 'user', content: 'Why is my Rust build failing with E0382 borrow of moved value?' },
        { role: 'assistant', content: 'You moved `v` into the closure; clone it or borrow it instead.' },
        { role: 'user', content: 'great, thank you so much! have a nice evening' },
      ],
    };
    expect(tierOf(goodbye)).toBe('fast');
  });

  it('reads tool definitions: a terse task for a coding agent is code', () => {
    const agent: RoutableRequest = {
      messages: [{ role: 'user', content: 'The build is broken on main, please sort it out.' }],
      tools: [
        { type: 'function', function: { name: 'read_file', description: 'Read a source file from the repository' } },
        { type: 'function', function: { name: 'run_tests', description: 'Run the unit tests and return failures' } },
      ],
    };
    expect(tierOf(agent)).toBe('code');
  });

  it('moves an uncertain prompt up as the quality bias grows', () => {
    const prompt = 'What are the pros and cons of nuclear power?';
    const tiers = [0, 0.25, 0.5, 0.75, 1].map((q) => tierOf(prompt, q));
    expect(tiers[0]).toBe('fast');
    const price = { fast: 0, code: 1, smart: 2 };
    for (let i = 1; i < tiers.length; i++) expect(price[tiers[i] as Tier]).toBeGreaterThanOrEqual(price[tiers[i - 1] as Tier]);
  });

  it('reports a confidence in 0..1 and a short reason', () => {
    const d = classifyRequest(user('Prove that there are infinitely many primes.'), 0.7);
    expect(d.tier).toBe('smart');
    expect(d.confidence).toBeGreaterThan(0.5);
    expect(d.confidence).toBeLessThanOrEqual(1);
    expect(d.reason.length).toBeGreaterThan(3);
    expect(d.reason.length).toBeLessThan(80);
  });

  it('decides on an empty or text-less request without failing', () => {
    expect(['fast', 'code', 'smart']).toContain(tierOf({ messages: [] }));
    expect(['fast', 'code', 'smart']).toContain(
      tierOf({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }] }),
    );
  });
});
