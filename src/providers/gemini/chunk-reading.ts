/**
 * Reads one GenerateContentResponse (a whole answer, or one stream chunk: Gemini streams the same object in
 * pieces) into what the contract needs: the first candidate's text and function calls, its finish reason,
 * the usage and the model. Lenient about fields it does not use; strict where guessing would corrupt the answer.
 */
import type { UpstreamTokens } from '../contract.js';
import type { FinishReason, ToolCall } from '../../openai/chat-types.js';
import { isRecord, protocolError } from '../upstream-failures.js';
import { errorEnvelope, payloadError, promptBlocked } from './errors.js';

export interface ChunkReading {
  /** False for a chunk with no candidate (a usage-only chunk). */
  hasCandidate: boolean;
  /** The candidate's answer text; thought summaries (`thought: true`) are left out of it. */
  text: string;
  /** The thought summaries' text (parts with `thought: true`), relayed as reasoning. */
  reasoning: string;
  functionCalls: { id: string | null; name: string; args: Record<string, unknown> }[];
  /** Gemini's raw finish reason; null while the candidate is still being generated. */
  finishReason: string | null;
  usage: UpstreamTokens | null;
  model: string | null;
  responseId: string | null;
}

/**
 * Gemini finish reasons -> OpenAI's. The content filters (safety, recitation, blocklists, PII, unsupported
 * language, image filters) all withheld output: `content_filter`. OTHER, NO_IMAGE, IMAGE_OTHER and reasons
 * added after this was written mean the answer ended for a reason OpenAI's set cannot name: `stop`.
 */
const FILTERED: ReadonlySet<string> = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * The model produced something unusable (an invalid function call, a call it was not allowed to make): a
 * malformed answer, which another target may well get right, rather than an empty `stop`.
 */
const FAILED: ReadonlySet<string> = new Set([
  'MALFORMED_FUNCTION_CALL',
  'MALFORMED_RESPONSE',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
  'MISSING_THOUGHT_SIGNATURE',
]);

export function readChunk(payload: unknown): ChunkReading {
  if (!isRecord(payload)) throw protocolError('upstream sent a response that is not a JSON object');
  const envelope = errorEnvelope(payload);
  if (envelope !== null) throw payloadError(envelope);
  const reading: ChunkReading = {
    hasCandidate: false,
    text: '',
    reasoning: '',
    functionCalls: [],
    finishReason: null,
    usage: toUsage(payload.usageMetadata),
    model: typeof payload.modelVersion === 'string' ? payload.modelVersion : null,
    responseId: typeof payload.responseId === 'string' && payload.responseId.length > 0 ? payload.responseId : null,
  };
  const candidates = payload.candidates;
  if (candidates === undefined || candidates === null || (Array.isArray(candidates) && candidates.length === 0)) {
    const feedback = payload.promptFeedback;
    if (isRecord(feedback) && typeof feedback.blockReason === 'string') {
      const message = typeof feedback.blockReasonMessage === 'string' ? feedback.blockReasonMessage : null;
      throw promptBlocked(feedback.blockReason, message);
    }
    return reading;
  }
  if (!Array.isArray(candidates)) throw protocolError('upstream response has a non-array `candidates`');
  const candidate = firstCandidate(candidates);
  if (candidate === undefined) return reading;
  reading.hasCandidate = true;
  const raw = candidate.finishReason;
  // FINISH_REASON_UNSPECIFIED is the enum's unused default: no finish.
  if (typeof raw === 'string' && raw.length > 0 && raw !== 'FINISH_REASON_UNSPECIFIED') reading.finishReason = raw;
  const parts = isRecord(candidate.content) ? candidate.content.parts : undefined;
  if (parts === undefined || parts === null) return reading;
  if (!Array.isArray(parts)) throw protocolError('upstream candidate has a non-array `content.parts`');
  for (const part of parts) {
    if (!isRecord(part)) continue;
    if (part.thought === true) {
      if (typeof part.text === 'string') reading.reasoning += part.text;
      continue;
    }
    if (typeof part.text === 'string') reading.text += part.text;
    if (isRecord(part.functionCall)) reading.functionCalls.push(functionCall(part.functionCall));
  }
  return reading;
}

/**
 * A function call ends a turn with STOP (Gemini has no reason of its own for it), so `sawToolCall` turns that
 * STOP into `tool_calls`, what an OpenAI client waits for before running the tools.
 */
export function toFinishReason(raw: string, sawToolCall: boolean): FinishReason {
  if (raw === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(raw)) return 'content_filter';
  if (FAILED.has(raw)) throw protocolError(`upstream model failed to finish its answer (${raw})`);
  return sawToolCall ? 'tool_calls' : 'stop';
}

/**
 * Gemini gives a call an id only in some cases; otherwise one is made from the response id and the call's
 * position, so it is unique in the conversation and the same for the same answer. Kept under 40 characters,
 * OpenAI's limit, in case the client replays it to an OpenAI model.
 */
export function toToolCall(call: ChunkReading['functionCalls'][number], responseKey: string, index: number): ToolCall {
  return {
    id: call.id ?? `call_${responseKey.slice(0, 28)}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  };
}

/** The key tool call ids are made from: the response id, or a random one when Gemini sent none. */
export function responseKey(responseId: string | null): string {
  return responseId ?? crypto.randomUUID().replace(/-/g, '');
}

/**
 * Completion tokens are the candidates' plus the thinking (`thoughtsTokenCount`, billed as output and not in
 * `candidatesTokenCount`), which is also the reasoning count; prompt tokens add the tool-use prompt
 * (`toolUsePromptTokenCount`, billed as input), and `cachedContentTokenCount` is the part of the prompt read
 * from a cache. Stream chunks carry running totals, so the last report is the answer's.
 */
function toUsage(raw: unknown): UpstreamTokens | null {
  if (!isRecord(raw) || typeof raw.promptTokenCount !== 'number') return null;
  const thoughts = count(raw.thoughtsTokenCount);
  const tokens: UpstreamTokens = {
    promptTokens: raw.promptTokenCount + count(raw.toolUsePromptTokenCount),
    completionTokens: count(raw.candidatesTokenCount) + thoughts,
    reasoningTokens: thoughts,
  };
  if (typeof raw.cachedContentTokenCount === 'number') tokens.cachedTokens = count(raw.cachedContentTokenCount);
  return tokens;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function functionCall(raw: Record<string, unknown>): ChunkReading['functionCalls'][number] {
  if (typeof raw.name !== 'string' || raw.name.length === 0) throw protocolError('upstream function call has no name');
  if (raw.args !== undefined && raw.args !== null && !isRecord(raw.args)) {
    throw protocolError('upstream function call arguments are not an object');
  }
  return {
    id: typeof raw.id === 'string' && raw.id.length > 0 ? raw.id : null,
    name: raw.name,
    args: isRecord(raw.args) ? raw.args : {},
  };
}

/** The candidate with index 0; Gemini omits `index` when it is 0 (proto3 JSON drops defaults). */
function firstCandidate(candidates: unknown[]): Record<string, unknown> | undefined {
  for (const c of candidates) {
    if (isRecord(c) && (c.index === 0 || c.index === undefined)) return c;
  }
  return undefined;
}
