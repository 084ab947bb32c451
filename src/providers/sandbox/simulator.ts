/**
 * The sandbox's deterministic "model". The same request (last user message, model, seed) always yields the
 * same answer, so tests and demos can assert on content; usage follows the gateway's own prompt estimate, so
 * metering tests can predict exact credits.
 */
import { estimatePromptTokens, estimateTextTokens } from '../../billing/token-estimate.js';
import type {
  AssistantMessage,
  ChatMessage,
  ChunkDelta,
  FinishReason,
  FunctionTool,
  ToolChoice,
} from '../../openai/chat-types.js';
import { CONTINUE_INSTRUCTION } from '../continuation.js';
import type { UpstreamTokens } from '../contract.js';
import { WORDS } from './word-list.js';

export interface SimulationInput {
  messages: readonly ChatMessage[];
  /** Output bound; null = the simulator's natural length. */
  max_tokens: number | null;
  seed?: number | null;
  tools?: readonly FunctionTool[];
  tool_choice?: ToolChoice;
}

export interface SimulatedCompletion {
  message: AssistantMessage;
  finishReason: FinishReason;
  usage: UpstreamTokens;
  /** The first stream delta: the role (and, for a tool call, its id and name). */
  firstDelta: ChunkDelta;
  /** The rest of the stream, one delta per completion token. */
  tokenDeltas: ChunkDelta[];
}

const MIN_WORDS = 12;
const MAX_WORDS = 120;

export function simulateCompletion(input: SimulationInput, model: string): SimulatedCompletion {
  const continued = continuationOf(input.messages);
  if (continued !== null) return continueCompletion(input, model, continued.original, continued.partial);
  const rng = mulberry32(fnv1a(`${lastUserText(input.messages)}\u0000${model}\u0000${input.seed ?? 0}`));
  const promptTokens = estimatePromptTokens(input.messages, input.tools);
  const bound = input.max_tokens ?? Number.POSITIVE_INFINITY;
  const toolName = forcedToolName(input);
  if (toolName !== null) return toolCallAnswer(toolName, rng, promptTokens, bound);

  const natural = MIN_WORDS + Math.floor(rng() * (MAX_WORDS - MIN_WORDS + 1));
  const cut = natural > bound;
  const pieces = prose(rng, cut ? Math.max(0, bound) : natural, !cut);
  return {
    message: { role: 'assistant', content: pieces.join(''), refusal: null },
    finishReason: cut ? 'length' : 'stop',
    usage: { promptTokens, completionTokens: pieces.length },
    firstDelta: { role: 'assistant', content: '', refusal: null },
    tokenDeltas: pieces.map((content) => ({ content })),
  };
}

/**
 * A request that asks to continue a cut answer (src/providers/continuation.ts): the original conversation,
 * and the part of the answer the client already has.
 */
function continuationOf(messages: readonly ChatMessage[]): { original: ChatMessage[]; partial: string } | null {
  const n = messages.length;
  const instruction = messages[n - 1];
  const partial = messages[n - 2];
  if (n < 3 || instruction?.role !== 'user' || instruction.content !== CONTINUE_INSTRUCTION) return null;
  if (partial?.role !== 'assistant' || typeof partial.content !== 'string') return null;
  return { original: messages.slice(0, -2), partial: partial.content };
}

/**
 * Goes on with the answer the original request would have had, from where `partial` ends, so a test can
 * check that a continued answer reads exactly as an uninterrupted one. A partial that is not a prefix of it
 * (another model started the answer) is continued after as many words as it has.
 */
function continueCompletion(input: SimulationInput, model: string, original: ChatMessage[], partial: string): SimulatedCompletion {
  const whole = simulateCompletion({ ...input, messages: original, max_tokens: null }, model);
  const pieces = whole.tokenDeltas.map((d) => d.content ?? '');
  let done = 0;
  let prefix = '';
  while (done < pieces.length && prefix.length < partial.length) prefix += pieces[done++];
  if (prefix !== partial) done = Math.min(pieces.length, partial.split(/\s+/).filter(Boolean).length);
  const bound = input.max_tokens ?? Number.POSITIVE_INFINITY;
  const rest = pieces.slice(done, done + Math.max(0, bound));
  const cut = pieces.length - done > bound;
  return {
    message: { role: 'assistant', content: rest.join(''), refusal: null },
    finishReason: cut ? 'length' : whole.finishReason,
    usage: { promptTokens: estimatePromptTokens(input.messages, input.tools), completionTokens: rest.length },
    firstDelta: { role: 'assistant', content: '', refusal: null },
    tokenDeltas: rest.map((content) => ({ content })),
  };
}

/** A named function, or `required` with tools: the answer is a call (the first tool for `required`). */
function forcedToolName(input: SimulationInput): string | null {
  const choice = input.tool_choice;
  if (typeof choice === 'object') return choice.function.name;
  if (choice === 'required') return input.tools?.[0]?.function.name ?? null;
  return null;
}

function toolCallAnswer(name: string, rng: () => number, promptTokens: number, bound: number): SimulatedCompletion {
  const id = `call_${randomId(rng, 24)}`;
  const args = '{}';
  const tokens = Math.max(1, Math.min(bound, estimateTextTokens(name) + estimateTextTokens(args) + 3));
  return {
    message: { role: 'assistant', content: null, refusal: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] },
    finishReason: 'tool_calls',
    usage: { promptTokens, completionTokens: tokens },
    firstDelta: {
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }],
    },
    tokenDeltas: [{ tool_calls: [{ index: 0, function: { arguments: args } }] }],
  };
}

/** Word pieces (" word", with punctuation attached): each piece is one completion token. */
function prose(rng: () => number, count: number, complete: boolean): string[] {
  const pieces: string[] = [];
  let sentenceLeft = 0;
  for (let i = 0; i < count; i++) {
    const startsSentence = sentenceLeft === 0;
    if (startsSentence) sentenceLeft = 5 + Math.floor(rng() * 10);
    let word = WORDS[Math.floor(rng() * WORDS.length)] ?? 'the';
    if (startsSentence) word = word.charAt(0).toUpperCase() + word.slice(1);
    sentenceLeft--;
    const last = i === count - 1;
    if (sentenceLeft === 0 || (last && complete)) {
      word += '.';
      sentenceLeft = 0;
    } else if (rng() < 0.08) {
      word += ',';
    }
    pieces.push(i === 0 ? word : ' ' + word);
  }
  return pieces;
}

function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  }
  return '';
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomId(rng: () => number, length: number): string {
  let id = '';
  for (let i = 0; i < length; i++) id += ID_ALPHABET[Math.floor(rng() * ID_ALPHABET.length)];
  return id;
}

/** FNV-1a over UTF-16 units: tiny, stable across runtimes, good enough to spread seeds. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A small seeded PRNG; Math.random cannot be seeded. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
