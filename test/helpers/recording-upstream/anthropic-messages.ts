/**
 * An Anthropic Messages upstream (`POST /messages`, JSON and the SSE event sequence) that checks requests as
 * the API does and answers as ./answer-plan.ts decides.
 *
 * Checked as Anthropic checks them: the `anthropic-version` header; unknown top-level fields ("Extra inputs
 * are not permitted"); `max_tokens`; tool_result blocks that answer no tool_use of the previous turn, and
 * tool_use blocks left unanswered; `thinking` (budget at least 1024 and below max_tokens; temperature only
 * 1 and no top_k beside it; no forced tool use); sampling options on API version 2026-10-21, which has none.
 * With `thinking` the answer opens with a thinking block and usage reports `output_tokens_details`;
 * `output_config.format` (json_schema) gets a JSON text. Usage reads and writes the prompt cache.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord, pieces, planAnswer, thinkingText, type PlanInput, type ToolResult } from './answer-plan.js';
import { outputTokensOf, promptTokensOf, sendJson, sendSse, type ExpectedUsage, type Recorded, type Recording } from './recording.js';

const KNOWN_FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools',
  'tool_choice', 'metadata', 'thinking', 'output_config', 'service_tier', 'container', 'mcp_servers',
  'context_management', 'inference_geo',
]);

const VERSIONS = new Set(['2023-06-01', '2026-10-21']);
/** Tokens written to the prompt cache on every request, beside those read from it. */
const CACHE_WRITE = 4;
const THINKING_TOKENS = 48;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export function anthropicMessagesHandler(recording: Recording) {
  let served = 0;
  return async (req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    const n = ++served;
    const record: Recorded = {
      kind: 'anthropic',
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: {},
      stream: false,
      reply: { status: 0 },
    };
    recording.all.push(record);
    try {
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/messages')) throw new Refusal(404, 'not_found_error', 'Not found');
      const body = parseBody(raw);
      record.body = body;
      const version = req.headers['anthropic-version'];
      if (typeof version !== 'string') throw new Refusal(400, 'invalid_request_error', 'anthropic-version: header is required');
      if (!VERSIONS.has(version)) throw new Refusal(400, 'invalid_request_error', `anthropic-version: invalid version '${version}'`);
      const thinking = checkRequest(body, version);
      const stream = body.stream === true;
      record.stream = stream;
      const input = planInput(body);
      const plan = planAnswer(input);
      const thought = thinking ? thinkingText(input.userText) : null;
      const textPieces = plan.kind === 'text' ? pieces(plan.text) : [];
      const thinkingTokens = thinking ? THINKING_TOKENS : 0;
      const output = outputTokensOf(plan, textPieces.length) + thinkingTokens;
      const prompt = promptTokensOf(raw);
      const cacheRead = Math.floor(prompt / 2);
      const cacheWrite = Math.min(CACHE_WRITE, prompt - cacheRead);
      const usage: ExpectedUsage = { prompt_tokens: prompt, completion_tokens: output, cached_tokens: cacheRead, reasoning_tokens: thinkingTokens };
      const toolCall = plan.kind === 'tool' ? { id: `toolu_rec${n}`, name: plan.name, args: plan.args } : undefined;
      record.reply = {
        status: 200,
        plan,
        text: plan.kind === 'text' ? plan.text : null,
        reasoningText: thought,
        usage,
        ...(toolCall ? { toolCall } : {}),
      };
      const model = String(body.model);
      const signature = `sig-rec${n}-${Buffer.from(thought ?? '').toString('base64').slice(0, 16)}`;
      const stopReason = toolCall ? 'tool_use' : 'end_turn';
      const inputUsage = { input_tokens: prompt - cacheRead - cacheWrite, cache_creation_input_tokens: cacheWrite, cache_read_input_tokens: cacheRead };
      const outputDetails = thinking ? { output_tokens_details: { thinking_tokens: thinkingTokens } } : {};
      if (!stream) {
        const content: unknown[] = [];
        if (thought !== null) content.push({ type: 'thinking', thinking: thought, signature });
        if (toolCall) content.push({ type: 'tool_use', id: toolCall.id, name: toolCall.name, input: toolCall.args });
        else content.push({ type: 'text', text: plan.kind === 'text' ? plan.text : '' });
        sendJson(res, 200, {
          id: `msg_rec${n}`,
          type: 'message',
          role: 'assistant',
          model,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: { ...inputUsage, output_tokens: output, ...outputDetails, service_tier: 'standard' },
        });
        return;
      }
      const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      let sse = event('message_start', {
        message: {
          id: `msg_rec${n}`,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...inputUsage, output_tokens: 1, service_tier: 'standard' },
        },
      });
      sse += event('ping', {});
      let index = 0;
      if (thought !== null) {
        sse += event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
        for (const piece of pieces(thought)) sse += event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
        sse += event('content_block_delta', { index, delta: { type: 'signature_delta', signature } });
        sse += event('content_block_stop', { index });
        index++;
      }
      if (toolCall) {
        sse += event('content_block_start', { index, content_block: { type: 'tool_use', id: toolCall.id, name: toolCall.name, input: {} } });
        const json = JSON.stringify(toolCall.args);
        sse += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } });
        for (let i = 0; i < json.length; i += 9) {
          sse += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 9) } });
        }
      } else {
        sse += event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        for (const piece of textPieces) sse += event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      }
      sse += event('content_block_stop', { index });
      sse += event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { ...inputUsage, output_tokens: output, ...outputDetails },
      });
      sse += event('message_stop', {});
      await sendSse(res, sse);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const error = { type: 'error', error: { type: err.type, message: err.message }, request_id: `req_rec${n}` };
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
    throw new Refusal(400, 'invalid_request_error', 'The request body is not valid JSON.');
  }
  if (!isRecord(body)) throw new Refusal(400, 'invalid_request_error', 'The request body must be an object.');
  return body;
}

/** Refuses what the Messages API refuses; returns whether thinking is on. */
function checkRequest(body: Record<string, unknown>, version: string): boolean {
  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key)) throw new Refusal(400, 'invalid_request_error', `${key}: Extra inputs are not permitted`);
  }
  if (typeof body.model !== 'string' || !body.model.startsWith('claude-')) {
    throw new Refusal(404, 'not_found_error', `model: ${String(body.model)}`);
  }
  const maxTokens = body.max_tokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new Refusal(400, 'invalid_request_error', 'max_tokens: Field required');
  }
  if (version === '2026-10-21') {
    for (const key of ['temperature', 'top_p', 'top_k']) {
      if (body[key] !== undefined) throw new Refusal(400, 'invalid_request_error', `${key}: sampling parameters are not supported on API version ${version}`);
    }
  }
  if (body.temperature !== undefined && body.top_p !== undefined) {
    throw new Refusal(400, 'invalid_request_error', '`temperature` and `top_p` cannot both be specified for this model. Please use only one.');
  }
  checkMessages(body.messages);
  const thinking = body.thinking;
  if (thinking === undefined || thinking === null) return false;
  if (!isRecord(thinking)) throw new Refusal(400, 'invalid_request_error', 'thinking: Input should be an object');
  if (thinking.type === 'disabled') return false;
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (typeof budget !== 'number' || !Number.isInteger(budget)) throw new Refusal(400, 'invalid_request_error', 'thinking.enabled.budget_tokens: Field required');
    if (budget < 1024) throw new Refusal(400, 'invalid_request_error', 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (maxTokens <= budget) throw new Refusal(400, 'invalid_request_error', '`max_tokens` must be greater than `thinking.budget_tokens`.');
  } else if (thinking.type !== 'adaptive') {
    throw new Refusal(400, 'invalid_request_error', `thinking.type: Input tag '${String(thinking.type)}' found using 'type' does not match any of the expected tags: 'adaptive', 'disabled', 'enabled'`);
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    throw new Refusal(400, 'invalid_request_error', '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.');
  }
  if (body.top_k !== undefined) throw new Refusal(400, 'invalid_request_error', '`top_k` must be unset when thinking is enabled.');
  const choice = body.tool_choice;
  if (isRecord(choice) && (choice.type === 'any' || choice.type === 'tool')) {
    throw new Refusal(400, 'invalid_request_error', 'Thinking may not be enabled when tool_choice forces tool use.');
  }
  return true;
}

function checkMessages(messages: unknown): void {
  if (!Array.isArray(messages) || messages.length === 0) throw new Refusal(400, 'invalid_request_error', 'messages: at least one message is required');
  let calls: Set<string> = new Set();
  messages.forEach((m: unknown, i) => {
    if (!isRecord(m) || (m.role !== 'user' && m.role !== 'assistant')) {
      throw new Refusal(400, 'invalid_request_error', `messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    const blocks = Array.isArray(m.content) ? m.content.filter(isRecord) : [];
    const answered = new Set(blocks.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id)));
    for (const id of answered) {
      if (!calls.has(id)) {
        throw new Refusal(
          400,
          'invalid_request_error',
          `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
    const missing = [...calls].filter((id) => !answered.has(id));
    if (missing.length > 0) {
      throw new Refusal(
        400,
        'invalid_request_error',
        `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
    calls = new Set(m.role === 'assistant' ? blocks.filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : []);
  });
  if (calls.size > 0) {
    throw new Refusal(400, 'invalid_request_error', `messages: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${[...calls].join(', ')}.`);
  }
}

function planInput(body: Record<string, unknown>): PlanInput {
  const messages = (body.messages as Record<string, unknown>[]) ?? [];
  const names = new Map<string, string>();
  for (const m of messages) {
    for (const b of blocksOf(m.content)) if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
  }
  const last = messages.at(-1);
  const lastBlocks = last?.role === 'user' ? blocksOf(last.content) : [];
  const results: ToolResult[] = lastBlocks
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({ name: names.get(String(b.tool_use_id)) ?? 'tool', content: textOf(b.content) }));
  const lastUser = [...messages].reverse().find((m) => m.role === 'user' && blocksOf(m.content).some((b) => b.type === 'text'));
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: unknown) =>
    isRecord(t) && typeof t.name === 'string' ? [{ name: t.name, parameters: isRecord(t.input_schema) ? t.input_schema : null }] : [],
  );
  const choice = isRecord(body.tool_choice) ? body.tool_choice : {};
  const format = isRecord(body.output_config) && isRecord(body.output_config.format) ? body.output_config.format : null;
  return {
    userText: lastUser ? textOf(lastUser.content) : '',
    toolResults: results.length > 0 ? results : null,
    tools,
    forcedTool: choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : null,
    toolsOff: choice.type === 'none',
    jsonSchema: format !== null && format.type === 'json_schema' && isRecord(format.schema) ? format.schema : null,
  };
}

function blocksOf(content: unknown): Record<string, unknown>[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

function textOf(content: unknown): string {
  return blocksOf(content)
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : ''))
    .join('');
}
