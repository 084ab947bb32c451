#!/usr/bin/env node
// CPU per upstream stream through the OpenAI-compatible adapter's reader (SSE decoding, chunk parsing,
// event translation), without HTTP: 18 events (16 tokens, the finish, the usage) delivered in two network
// reads, read to the end many times over. The baseline, measured in the same run, is the least any reader
// does: the same bytes through a TextDecoder and eventsource-parser, each event JSON-parsed, no generators.
// Run it pinned to one core for stable figures:
//
//   npm run build && taskset -c 0 node bench/sse-reader.mjs [--streams 20000]
import { parseArgs } from 'node:util';
import { createParser } from 'eventsource-parser';
import { cancellableEvents } from '../dist/providers/openai-compatible/event-stream.js';

const { values } = parseArgs({ options: { streams: { type: 'string', default: '20000' } } });
const STREAMS = Number(values.streams);

const chunk = (fields) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', ...fields })}\n\n`;
let text = '';
for (let i = 0; i < 16; i++) text += chunk({ choices: [{ index: 0, delta: { content: `word${i} ` }, finish_reason: null }] });
text += chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
text += chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 16, total_tokens: 26 } });
text += 'data: [DONE]\n\n';
const bytes = new TextEncoder().encode(text);
const half = bytes.length >> 1;
const body = () =>
  new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.subarray(0, half));
      controller.enqueue(bytes.subarray(half));
      controller.close();
    },
  });
const signal = new AbortController().signal;

async function readOne() {
  let events = 0;
  for await (const _ of cancellableEvents(body(), signal)) events++;
  return events;
}

async function baselineOne() {
  let events = 0;
  const parser = createParser({
    onEvent: (e) => {
      if (e.data !== '[DONE]') JSON.parse(e.data);
      events++;
    },
  });
  const decoder = new TextDecoder();
  const reader = body().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  return events;
}

async function cpuPerStream(fn) {
  for (let i = 0; i < Math.min(3000, STREAMS); i++) await fn();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < STREAMS; i++) await fn();
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / STREAMS;
}

const events = await readOne();
// Interleaved, so a slower minute of a shared machine touches both.
const reader = [];
const baseline = [];
for (let round = 0; round < 3; round++) {
  baseline.push(await cpuPerStream(baselineOne));
  reader.push(await cpuPerStream(readOne));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[1];
console.log(`SSE reader, ${STREAMS} streams of ${events} events, ${process.version}, CPU per stream (median of 3 rounds):`);
console.log(`  baseline (decoder + parser + JSON.parse)  ${median(baseline).toFixed(1)} us`);
console.log(`  the adapter's reader                      ${median(reader).toFixed(1)} us  (x${(median(reader) / median(baseline)).toFixed(2)} the baseline)`);
