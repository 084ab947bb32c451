/**
 * An OpenAI chat-completions upstream (`POST /chat/completions`, JSON and SSE) that checks requests as
 * OpenAI does and answers as ./answer-plan.ts decides. Two models:
 *
 * - `o3`, a reasoning model: like OpenAI's o-series it refuses sampling and penalty options (temperature
 *   and top_p other than 1, penalties, logprobs, logit_bias, stop) and `max_tokens` (it takes
 *   `max_completion_tokens`), accepts `reasoning_effort`, and always reports reasoning tokens;
 * - `gpt-4o-mini`, a chat model: takes the sampling options and refuses `reasoning_effort`; with
 *   `logprobs: true` its text answers carry `choices[0].logprobs.content`, one entry per streamed piece of text
 *   (token, logprob, UTF-8 bytes and `top_logprobs` alternatives, as many as `top_logprobs` asks), on the
 *   completion or on each content chunk.
 *
 * Both answer with `system_fingerprint` and `service_tier` (the tier asked for, `default` for `auto` or
 * none), on the completion and on every chunk. The reply records the logprobs, fingerprint and tier it sent.
 *
 * Unknown request arguments, unknown message fields and tool messages that answer no call are refused with
 * OpenAI's own error bodies.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord, pieces, planAnswer, type JsonSchema, type PlanInput, type ToolResult } from './answer-plan.js';
import {
  outputTokensOf,
  promptTokensOf,
  sendJson,
  sendSse,
  type ExpectedUsage,
  type Recorded,
  type Recording,
  type WireLogprobs,
  type WireTokenLogprob,
} from './recording.js';

const KNOWN_ARGUMENTS = new Set([
  'model', 'messages', 'temperature', 'top_p', 'n', 'stream', 'stream_options', 'stop', 'max_tokens',
  'max_completion_tokens', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs',
  'user', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort',
  'metadata', 'store', 'service_tier', 'prompt_cache_key', 'safety_identifier', 'modalities', 'audio',
  'prediction', 'verbosity', 'web_search_options', 'prompt_cache_retention', 'prompt_cache_options',
]);

/** `service_tier` values OpenAI answers with; a request for `auto` (or none) is served on `default`. */
const SERVICE_TIERS = new Set(['default', 'flex', 'scale', 'priority']);

/** Message fields OpenAI accepts per role; it also takes `name` on tool messages (LangChain sends it). */
const MESSAGE_FIELDS: Record<string, ReadonlySet<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call']),
  tool: new Set(['role', 'content', 'tool_call_id', 'name']),
};

/** Options the o-series refuses (temperature and top_p only when not 1). */
const REASONING_REFUSES = ['temperature', 'top_p', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'logit_bias', 'stop'];

const REASONING_TOKENS: Record<string, number> = { minimal: 16, low: 64, medium: 192, high: 512 };

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null,
    readonly code: string | null,
  ) {
    super(message);
  }
}

export function openAIChatHandler(recording: Recording) {
  let served = 0;
  return async (req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    const n = ++served;
    const record: Recorded = {
      kind: 'openai',
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: {},
      stream: false,
      reply: { status: 0 },
    };
    recording.all.push(record);
    try {
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
        throw new Refusal(404, `Invalid URL (${req.method ?? ''} ${req.url ?? ''})`, null, null);
      }
      const body = parseBody(raw);
      record.body = body;
      const model = checkRequest(body);
      const stream = body.stream === true;
      record.stream = stream;
      const plan = planAnswer(planInput(body));
      const reasoning = model === 'o3' ? (REASONING_TOKENS[String(body.reasoning_effort ?? 'medium')] ?? 192) : 0;
      const prompt = promptTokensOf(raw);
      const textPieces = plan.kind === 'text' ? pieces(plan.text) : [];
      const completion = outputTokensOf(plan, textPieces.length) + reasoning;
      const usage: ExpectedUsage = {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached_tokens: Math.floor(prompt / 2),
        reasoning_tokens: reasoning,
      };
      const toolCall = plan.kind === 'tool' ? { id: `call_rec${n}`, name: plan.name, args: plan.args } : undefined;
      // o3 refused logprobs above: only gpt-4o-mini gets here with them. A tool call's answer has no text to score.
      const tokenLogprobs = body.logprobs === true && plan.kind === 'text' ? textPieces.map((p, i) => tokenLogprob(p, i, topCountOf(body))) : null;
      const serviceTier = typeof body.service_tier === 'string' && SERVICE_TIERS.has(body.service_tier) ? body.service_tier : 'default';
      const systemFingerprint = `fp_rec${model === 'o3' ? 'o3' : '4o'}`;
      record.reply = {
        status: 200,
        plan,
        text: plan.kind === 'text' ? plan.text : null,
        reasoningText: null,
        usage,
        ...(toolCall ? { toolCall } : {}),
        logprobs: tokenLogprobs ? { content: tokenLogprobs, refusal: null } : null,
        ...(stream && tokenLogprobs ? { chunkLogprobs: [] } : {}),
        systemFingerprint,
        serviceTier,
      };
      const wire = {
        id: `chatcmpl-rec${n}`,
        created: 1_780_000_000 + n,
        model: model === 'o3' ? 'o3-2025-04-16' : 'gpt-4o-mini-2024-07-18',
        service_tier: serviceTier,
        system_fingerprint: systemFingerprint,
      };
      const wireUsage = {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.prompt_tokens + usage.completion_tokens,
        prompt_tokens_details: { cached_tokens: usage.cached_tokens, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: usage.reasoning_tokens,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      };
      const wireCall = toolCall
        ? { id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: JSON.stringify(toolCall.args) } }
        : null;
      const finish = wireCall ? 'tool_calls' : 'stop';
      if (!stream) {
        sendJson(res, 200, {
          ...wire,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: plan.kind === 'text' ? plan.text : null,
                refusal: null,
                annotations: [],
                ...(wireCall ? { tool_calls: [wireCall] } : {}),
              },
              logprobs: record.reply.logprobs,
              finish_reason: finish,
            },
          ],
          usage: wireUsage,
        });
        return;
      }
      const withUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
      const frame = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
        `data: ${JSON.stringify({ ...wire, object: 'chat.completion.chunk', choices, ...(withUsage ? { usage: null } : {}), ...extra })}\n\n`;
      const delta = (d: Record<string, unknown>, finishReason: string | null = null, logprobs: WireLogprobs | null = null): string => {
        if (logprobs !== null) record.reply.chunkLogprobs?.push(logprobs);
        return frame([{ index: 0, delta: d, logprobs, finish_reason: finishReason }]);
      };
      let sse = delta({ role: 'assistant', content: wireCall ? null : '', refusal: null });
      if (wireCall) {
        sse += delta({ tool_calls: [{ index: 0, id: wireCall.id, type: 'function', function: { name: wireCall.function.name, arguments: '' } }] });
        for (const piece of chop(wireCall.function.arguments, 7)) {
          sse += delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
        }
      } else {
        // With logprobs, each content chunk scores its own piece; the role and finish chunks carry none.
        textPieces.forEach((piece, i) => {
          const entry = tokenLogprobs?.[i];
          sse += delta({ content: piece }, null, entry ? { content: [entry], refusal: null } : null);
        });
      }
      sse += delta({}, finish);
      if (withUsage) sse += frame([], { usage: wireUsage });
      sse += 'data: [DONE]\n\n';
      await sendSse(res, sse);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const error = { error: { message: err.message, type: 'invalid_request_error', param: err.param, code: err.code } };
      record.reply = { status: err.status, error };
      sendJson(res, err.status, error);
    }
  };
}

function parseBody(raw: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new Refusal(400, 'We could not parse the JSON body of your request.', null, null);
  }
  if (!isRecord(body)) throw new Refusal(400, 'The request body must be a JSON object.', null, null);
  return body;
}

/** Refuses what OpenAI refuses; returns the model. */
function checkRequest(body: Record<string, unknown>): 'o3' | 'gpt-4o-mini' {
  for (const key of Object.keys(body)) {
    if (!KNOWN_ARGUMENTS.has(key)) throw new Refusal(400, `Unrecognized request argument supplied: ${key}`, null, null);
  }
  const model = body.model;
  if (model !== 'o3' && model !== 'gpt-4o-mini') {
    throw new Refusal(404, `The model \`${String(model)}\` does not exist or you do not have access to it.`, null, 'model_not_found');
  }
  if (model === 'o3') {
    for (const key of REASONING_REFUSES) {
      const value = body[key];
      if (value === undefined || value === null) continue;
      if ((key === 'temperature' || key === 'top_p') && value === 1) continue;
      throw new Refusal(400, `Unsupported parameter: '${key}' is not supported with this model.`, key, 'unsupported_parameter');
    }
    if (body.max_tokens !== undefined && body.max_tokens !== null) {
      throw new Refusal(
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        'max_tokens',
        'unsupported_parameter',
      );
    }
    const effort = body.reasoning_effort;
    if (effort !== undefined && effort !== null && !(typeof effort === 'string' && effort in REASONING_TOKENS)) {
      throw new Refusal(400, `Unsupported value: 'reasoning_effort' does not support '${String(effort)}' with this model.`, 'reasoning_effort', 'unsupported_value');
    }
  } else if (body.reasoning_effort !== undefined && body.reasoning_effort !== null) {
    throw new Refusal(400, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", 'reasoning_effort', 'unsupported_parameter');
  }
  const top = body.top_logprobs;
  if (top !== undefined && top !== null) {
    if (typeof top !== 'number' || !Number.isInteger(top) || top < 0 || top > 20) {
      throw new Refusal(400, `Invalid 'top_logprobs': integer between 0 and 20 expected, got ${JSON.stringify(top)}.`, 'top_logprobs', 'invalid_value');
    }
    if (body.logprobs !== true) {
      throw new Refusal(400, "Invalid value for 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used.", 'top_logprobs', null);
    }
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw new Refusal(400, "The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', null);
  }
  checkMessages(body.messages);
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (body.tool_choice !== undefined && tools.length === 0) {
    throw new Refusal(400, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice', null);
  }
  const format = body.response_format;
  if (isRecord(format) && format.type === 'json_schema') {
    const schema = format.json_schema;
    if (!isRecord(schema) || typeof schema.name !== 'string') {
      throw new Refusal(400, "Missing required parameter: 'response_format.json_schema.name'.", 'response_format.json_schema.name', 'missing_required_parameter');
    }
  }
  return model;
}

function checkMessages(messages: unknown): void {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new Refusal(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.", 'messages', 'empty_array');
  }
  /** Ids of the last assistant turn's calls not answered yet. */
  let open: Set<string> | null = null;
  messages.forEach((m: unknown, i) => {
    if (!isRecord(m) || typeof m.role !== 'string' || !(m.role in MESSAGE_FIELDS)) {
      throw new Refusal(400, `Invalid value for 'messages[${i}].role'.`, `messages.[${i}].role`, 'invalid_value');
    }
    const allowed = MESSAGE_FIELDS[m.role] ?? new Set<string>();
    for (const key of Object.keys(m)) {
      if (!allowed.has(key)) {
        throw new Refusal(400, `Additional properties are not allowed ('${key}' was unexpected) - 'messages.${i}'`, `messages.[${i}]`, null);
      }
    }
    if (m.role === 'tool') {
      if (open === null || typeof m.tool_call_id !== 'string' || !open.has(m.tool_call_id)) {
        throw new Refusal(
          400,
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
          null,
        );
      }
      open.delete(m.tool_call_id);
      return;
    }
    if (open !== null && open.size > 0) {
      throw new Refusal(
        400,
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
        `messages.[${i}].role`,
        null,
      );
    }
    open = m.role === 'assistant' && Array.isArray(m.tool_calls) ? new Set(m.tool_calls.map((c: unknown) => (isRecord(c) ? String(c.id) : ''))) : null;
  });
}

function topCountOf(body: Record<string, unknown>): number {
  return typeof body.top_logprobs === 'number' ? body.top_logprobs : 0;
}

const utf8 = (text: string): number[] => [...new TextEncoder().encode(text)];

/**
 * The score of the `index`th piece of an answer: the piece itself as the token, a logprob that differs from
 * piece to piece, and `top` alternatives led by the chosen token, each less likely than the one before.
 */
function tokenLogprob(piece: string, index: number, top: number): WireTokenLogprob {
  const logprob = -Number((0.0123 + 0.137 * (index % 7) + 0.0041 * piece.length).toFixed(6));
  const alternatives = Array.from({ length: top }, (_, k) => {
    const token = k === 0 ? piece : `${piece.trim()}~${k}${piece.slice(piece.trimEnd().length)}`;
    return { token, logprob: Number((logprob - 0.75 * k).toFixed(6)), bytes: utf8(token) };
  });
  return { token: piece, logprob, bytes: utf8(piece), top_logprobs: alternatives };
}

function planInput(body: Record<string, unknown>): PlanInput {
  const messages = (body.messages as Record<string, unknown>[]) ?? [];
  const names = new Map<string, string>();
  for (const m of messages) {
    if (Array.isArray(m.tool_calls)) {
      for (const c of m.tool_calls) if (isRecord(c) && isRecord(c.function)) names.set(String(c.id), String(c.function.name));
    }
  }
  const trailing: ToolResult[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--) {
    const m = messages[i] ?? {};
    trailing.unshift({ name: names.get(String(m.tool_call_id)) ?? 'tool', content: textOf(m.content) });
  }
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: unknown) =>
    isRecord(t) && isRecord(t.function) ? [{ name: String(t.function.name), parameters: isRecord(t.function.parameters) ? t.function.parameters : null }] : [],
  );
  const choice = body.tool_choice;
  const format = body.response_format;
  let jsonSchema: JsonSchema | null = null;
  if (isRecord(format) && format.type === 'json_schema' && isRecord(format.json_schema)) {
    jsonSchema = isRecord(format.json_schema.schema) ? format.json_schema.schema : {};
  } else if (isRecord(format) && format.type === 'json_object') {
    jsonSchema = { type: 'object', properties: { answer: { type: 'string' } } };
  }
  return {
    userText: lastUser ? textOf(lastUser.content) : '',
    toolResults: trailing.length > 0 ? trailing : null,
    tools,
    forcedTool: isRecord(choice) && isRecord(choice.function) ? String(choice.function.name) : null,
    toolsOff: choice === 'none',
    jsonSchema,
  };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: unknown) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function chop(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}
