#!/usr/bin/env node
// svc-auto's decision latency: classifyRequest (features, model, dial), timed call by call after a warm-up,
// on many different 4 KB prompts built from the evaluation set (prose, code, math, logic and mixtures) so
// that no single string is cached. Goal: p99 <= 50 us on a 4 KB prompt. A second scenario adds a 2 KB
// system prompt, six earlier turns and eight tools: the most a request makes the router read; a third
// times 4 KB prompts in Chinese, Japanese and Russian. Each is timed alternately with a plain loop of the
// same median (lib/machine-tail.mjs), whose p99 is the machine's own tail at that length.
// Run: npm run bench:router [-- --calls N --bytes B --json]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { classifyRequest } from '../dist/routing/auto/classifier.js';
import { timeAgainstMachine } from './lib/machine-tail.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '50000' },
    bytes: { type: 'string', default: '4096' },
    prompts: { type: 'string', default: '500' },
    json: { type: 'boolean', default: false },
  },
});
const CALLS = Number(values.calls);
const BYTES = Number(values.bytes);

const rows = readFileSync(new URL('../eval/routing/dev.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));

// Deterministic pseudo-random order (no Math.random: reruns time the same prompts).
let seed = 42;
const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % rows.length);

/** A prompt of BYTES UTF-8 bytes: dev prompts concatenated in a pseudo-random order, cut to size. */
function prompt() {
  let text = '';
  while (new TextEncoder().encode(text).length < BYTES) text += rows[next()].prompt + '\n\n';
  const bytes = new TextEncoder().encode(text).slice(0, BYTES);
  return new TextDecoder().decode(bytes);
}

const single = Array.from({ length: Number(values.prompts) }, () => ({ messages: [{ role: 'user', content: prompt() }] }));
const tools = Array.from({ length: 8 }, (_, i) => ({
  type: 'function',
  function: { name: `tool_${i}`, description: rows[next()].prompt.slice(0, 200) },
}));
const conversation = single.map((r) => ({
  messages: [
    { role: 'system', content: prompt().slice(0, 2048) },
    ...Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: rows[next()].prompt })),
    r.messages[0],
  ],
  tools,
}));

// Chinese, Japanese and Russian: CJK is read one character at a time, so a 4 KB Chinese prompt (about
// 1,400 characters) makes three features a character where English makes about one a word.
const NON_LATIN = [
  '我想学习编程，请帮我写一个排序函数，并解释它的时间复杂度。',
  '请总结下面这篇文章的主要观点，用三句话说明。',
  '证明根号二是无理数，并写出每一步的推理。',
  'Pythonでリストをソートする方法を教えてください。エラーが出ます。',
  '来週の東京旅行の計画を立ててください。予算は五万円です。',
  'Как отбросить нули справа у числа в строке? Напишите функцию на Python.',
  'Переведи этот текст на английский язык и исправь ошибки.',
];
function nonLatinPrompt() {
  let text = '';
  while (new TextEncoder().encode(text).length < BYTES) text += NON_LATIN[next() % NON_LATIN.length] + '\n';
  return new TextDecoder().decode(new TextEncoder().encode(text).slice(0, BYTES)).replace(/\uFFFD+$/, '');
}
const nonLatin = Array.from({ length: Number(values.prompts) }, () => ({ messages: [{ role: 'user', content: nonLatinPrompt() }] }));

let sink = 0;

/**
 * Each scenario timed call by call, alternately with a plain loop of the same median (lib/machine-tail.mjs):
 * the loop's quantiles are the machine's own tail at that length, measured in the same moments.
 */
function measure(requests) {
  const r = timeAgainstMachine((i) => (sink += classifyRequest(requests[i % requests.length], 0.7).confidence), CALLS, 5000);
  sink += r.sink;
  const f = (x) => +x.toFixed(2);
  return {
    p50_us: f(r.own.p50),
    p90_us: f(r.own.p90),
    p99_us: f(r.own.p99),
    p999_us: f(r.own.p999),
    max_us: f(r.own.max),
    machine: { p50_us: f(r.machine.p50), p99_us: f(r.machine.p99), p999_us: f(r.machine.p999) },
    p99_x_machine: f(r.own.p99 / r.machine.p99),
  };
}

const result = {
  node: process.version,
  calls: CALLS,
  distinct_requests: single.length,
  prompt_bytes: BYTES,
  goal_p99_us: 50,
  prompt_only: measure(single),
  with_context: measure(conversation),
  non_latin: measure(nonLatin),
};
if (values.json) console.log(JSON.stringify(result, null, 2));
else {
  console.log(`svc-auto decision, ${CALLS} calls per scenario over ${single.length} distinct requests, warm, ${process.version}`);
  for (const [name, r] of [
    [`${BYTES}-byte prompt`, result.prompt_only],
    [`${BYTES}-byte prompt + 2 KB system, 6 turns, 8 tools`, result.with_context],
    [`${BYTES}-byte prompt in Chinese, Japanese, Russian`, result.non_latin],
  ]) {
    console.log(`  ${name.padEnd(52)} p50 ${r.p50_us} us  p90 ${r.p90_us} us  p99 ${r.p99_us} us  p99.9 ${r.p999_us} us  max ${r.max_us} us`);
    console.log(`  ${''.padEnd(52)} a plain loop of the same p50, alternated: p50 ${r.machine.p50_us} us  p99 ${r.machine.p99_us} us  (p99 ${r.p99_x_machine}x the machine's)`);
  }
  console.log('  goal: p99 <= 50 us on a 4 KB prompt');
}
if (sink === -1) console.log(sink); // keeps the calls observable to the optimiser
