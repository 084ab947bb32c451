/**
 * Request -> features. What is read, and how much (at most 3,072 characters in all, which bounds the
 * decision's cost whatever the request's size):
 * - the last user turn (the task), up to its first 1,024 and last 512 characters: long prompts put the
 *   instruction at the start or at the end, the middle is usually pasted material (every prompt of the
 *   evaluation set but a few is read whole; cross-validation did not move with larger caps);
 * - the context at CONTEXT_WEIGHT of the main text's weight: system/developer prompts (512 characters),
 *   the other turns newest first (768), tool names and descriptions (256);
 * - the structure: turns, a system prompt, tools, attachments (images, audio, files: counted, not read).
 * Hashed features are scaled by about 1/sqrt(count) per group and region, so a long prompt does not
 * outvote a short one by length alone.
 */
import type { ChatMessage, ContentPart, FunctionTool } from '../../openai/chat-types.js';
import { Dense, HASH_GROUP_COUNT, HashGroup } from './feature-layout.js';
import { Count, COUNT_SIZE, FeatureBuffer, Region, Scanner } from './scanner.js';
import { LEX_COUNT } from './lexicon.js';

/** The part of a chat request the router reads. */
export interface RoutableRequest {
  messages: readonly ChatMessage[];
  tools?: readonly FunctionTool[] | undefined;
}

export const MAIN_HEAD_CHARS = 1024;
export const MAIN_TAIL_CHARS = 512;
export const SYSTEM_CHARS = 512;
export const HISTORY_CHARS = 768;
export const TOOLS_CHARS = 256;
/** Context counts this much relative to the last user turn (hand-set: the training prompts are single-turn). */
export const CONTEXT_WEIGHT = 0.35;

const scanner = new Scanner();

function textLength(content: string | ContentPart[] | null): number {
  if (typeof content === 'string') return content.length;
  let n = 0;
  if (content) for (const p of content) if (p.type === 'text') n += p.text.length;
  return n;
}

/** Scans [from, to) of the content's text (text parts taken as one string); returns the characters read. */
function scanRange(content: string | ContentPart[] | null, from: number, to: number): number {
  if (to <= from) return 0;
  if (typeof content === 'string') {
    scanner.scan(content, from, to);
    return to - from;
  }
  if (!content) return 0;
  let offset = 0;
  for (const p of content) {
    if (p.type !== 'text') continue;
    const start = Math.max(from, offset);
    const end = Math.min(to, offset + p.text.length);
    if (start < end) scanner.scan(p.text, start - offset, end - offset);
    offset += p.text.length;
    if (offset >= to) break;
  }
  return to - from;
}

function scanHeadTail(content: string | ContentPart[] | null, head: number, tail: number): void {
  const n = textLength(content);
  if (n <= head + tail) {
    scanRange(content, 0, n);
    return;
  }
  scanRange(content, 0, head);
  scanRange(content, n - tail, n);
}

function scanHead(content: string | ContentPart[] | null, budget: number): number {
  return budget > 0 ? scanRange(content, 0, Math.min(budget, textLength(content))) : 0;
}

function attachments(content: string | ContentPart[] | null): number {
  let n = 0;
  if (Array.isArray(content)) for (const p of content) if (p.type !== 'text' && p.type !== 'refusal') n++;
  return n;
}

function mainTurn(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return i;
  return messages.length - 1;
}

/**
 * Fills `buf` with the request's features: recorded one by one, or, when `buf.weights` is set (serving),
 * summed per group on the fly.
 */
export function extractFeatures(request: RoutableRequest, buf: FeatureBuffer): void {
  buf.reset();
  const messages = request.messages;
  const main = mainTurn(messages);

  scanner.begin(buf, Region.Main);
  const mainMessage = messages[main];
  if (mainMessage) scanHeadTail(mainMessage.content, MAIN_HEAD_CHARS, MAIN_TAIL_CHARS);

  scanner.begin(buf, Region.Context);
  let system = 0;
  let turns = 0;
  let attached = 0;
  let budget = SYSTEM_CHARS;
  for (const m of messages) {
    attached += attachments(m.content);
    if (m.role === 'system' || m.role === 'developer') {
      system = 1;
      budget -= scanHead(m.content, budget);
    } else {
      turns++;
    }
  }
  budget = HISTORY_CHARS;
  for (let i = messages.length - 1; i >= 0 && budget > 0; i--) {
    const m = messages[i] as ChatMessage;
    if (i === main || m.role === 'system' || m.role === 'developer') continue;
    budget -= scanHead(m.content, budget);
  }
  const tools = request.tools ?? [];
  budget = TOOLS_CHARS;
  for (const t of tools) {
    if (budget <= 0) break;
    const name = t.function.name;
    scanner.scan(name, 0, Math.min(name.length, budget));
    budget -= name.length;
    const description = t.function.description ?? '';
    const n = Math.min(description.length, Math.max(budget, 0));
    if (n > 0) scanner.scan(description, 0, n);
    budget -= n;
  }

  normalise(buf);
  denseFeatures(buf, turns, system, tools.length, attached);
}

/**
 * Each (region, group)'s feature value: the region's weight over sqrt(count + SHORT_TEXT_PRIOR). The
 * prior keeps the few features of a two-word prompt from each weighing like a paragraph's worth of
 * evidence ("prove it" is decided by "prove", not by how short texts usually begin).
 */
const SHORT_TEXT_PRIOR = 4;
/**
 * Shapes get a stronger prior: the few shapes of a one-line prompt are those of every one-line prompt, so
 * they tell only that it is short (a Stack Overflow title, a search query, "prove it"), not what it asks.
 */
const SHORT_SHAPES_PRIOR = 16;

function normalise(buf: FeatureBuffer): void {
  for (let slot = 0; slot < 2 * HASH_GROUP_COUNT; slot++) {
    const n = buf.found[slot] as number;
    const weight = slot < HASH_GROUP_COUNT ? 1 : CONTEXT_WEIGHT;
    const prior = slot % HASH_GROUP_COUNT === HashGroup.Shapes ? SHORT_SHAPES_PRIOR : SHORT_TEXT_PRIOR;
    buf.scale[slot] = n > 0 ? weight / Math.sqrt(n + prior) : 0;
  }
  for (let i = 0; i < buf.count; i++) {
    buf.value[i] = buf.scale[(buf.region[i] as number) * HASH_GROUP_COUNT + (buf.group[i] as number)] as number;
  }
}

/**
 * A count over the main text plus the context at its weight. Only the word lists are counted this way:
 * syntax and notation describe the task text itself, and code quoted in an earlier turn should not make
 * "thanks, bye" look like code (the context still speaks through its words).
 */
function both(c: Float64Array, k: number): number {
  return (c[k] as number) + CONTEXT_WEIGHT * (c[COUNT_SIZE + k] as number);
}

function denseFeatures(buf: FeatureBuffer, turns: number, system: number, tools: number, attached: number): void {
  const c = buf.counts;
  const d = buf.dense;
  const chars = c[Count.Chars] as number;
  d[Dense.Fence] = Math.min(c[Count.Fence] as number, 4) / 2;
  d[Dense.InlineCode] = Math.log1p(c[Count.InlineCode] as number);
  d[Dense.Indent] = Math.log1p(c[Count.Indent] as number) / 2;
  d[Dense.CodePunct] = Math.log1p(c[Count.CodePunct] as number) / 2;
  d[Dense.Identifier] = Math.log1p(c[Count.Identifier] as number);
  d[Dense.Call] = Math.log1p(c[Count.Call] as number);
  d[Dense.DigitShare] = chars > 0 ? Math.min(1, (4 * (c[Count.Digits] as number)) / chars) : 0;
  d[Dense.Numbers] = Math.log1p(c[Count.Numbers] as number) / 2;
  d[Dense.Arithmetic] = Math.log1p(c[Count.Arithmetic] as number);
  d[Dense.MathSymbol] = Math.log1p(c[Count.MathSymbol] as number);
  d[Dense.Latex] = Math.log1p(c[Count.Latex] as number);
  d[Dense.Money] = Math.log1p(c[Count.Money] as number);
  d[Dense.Percent] = Math.log1p(c[Count.Percent] as number);
  d[Dense.Questions] = Math.log1p(c[Count.Questions] as number);
  d[Dense.Turns] = Math.log1p(Math.max(turns - 1, 0));
  d[Dense.System] = system;
  d[Dense.Tools] = Math.log1p(tools);
  d[Dense.Attachments] = Math.log1p(attached);
  d[Dense.CodeLines] = Math.log1p(c[Count.CodeLine] as number);
  d[Dense.Blocks] = Math.log1p(c[Count.Block] as number);
  for (let l = 0; l < LEX_COUNT; l++) d[Dense.Lexicon + l] = Math.log1p(both(c, Count.Lexicon + l));
}
