/**
 * Gateway ChatRequest -> the body of `POST /v1/messages`.
 *
 * What happens to each request option Anthropic has no field for. The rule: a sampling nudge the model may
 * ignore anyway is dropped (the 2026-10-21 API itself removed sampling controls); an option that changes what
 * the client gets back, or that it relies on as a guarantee, is refused with the 400 the gateway turns into
 * `upstream_rejected_request`, never silently changed.
 *
 * | option                            | decision                                                                  |
 * | --------------------------------- | ------------------------------------------------------------------------- |
 * | system / developer messages       | joined (blank line) into top-level `system`, wherever they stand           |
 * | message `name`                    | dropped: no per-message author field                                       |
 * | max_tokens                        | always sent (the gateway's output bound; Anthropic requires it)            |
 * | stop                              | -> `stop_sequences`                                                        |
 * | temperature (2026-10-21)          | dropped: the version refuses it even at its default                       |
 * | temperature (2023-06-01)          | sent, clamped to 1: the API takes 0..1, the gateway 0..2; 0..1 means the   |
 * |                                   | same on both. Not sent when top_p is (below)                               |
 * | top_p (2026-10-21)                | dropped, as temperature                                                    |
 * | top_p (2023-06-01)                | sent when below 1 (1, the default, truncates nothing), and then temperature |
 * |                                   | is not: Claude Opus 4.1, Sonnet 4.5 and later refuse both together ("cannot|
 * |                                   | both be specified"), and only a top_p below 1 is surely the client's own   |
 * |                                   | choice (a 0.7 temperature may be the gateway's default)                    |
 * | tools                             | -> `{name, description, input_schema}`; `strict` dropped                   |
 * | tool_choice                       | auto -> auto, none -> none, required -> any, named -> tool                 |
 * | parallel_tool_calls: false        | -> `disable_parallel_tool_use` on the tool choice                           |
 * | reasoning_effort                  | -> `thinking: {type: enabled, budget_tokens}` (../reasoning-effort.ts); none|
 * |                                   | with a continuation prefill or while a tool loop is under way (thinkingOf) |
 * | user                              | -> `metadata.user_id`                                                      |
 * | metadata                          | dropped: Anthropic's `metadata` takes only `user_id`                       |
 * | seed                              | dropped: no equivalent; OpenAI itself promises only best-effort determinism|
 * | presence_penalty, frequency_pen.  | dropped: sampling nudges with no equivalent                                |
 * | logit_bias (non-empty)            | refused: token ids are another tokenizer's, and a ban cannot be honoured   |
 * | logprobs: true, top_logprobs      | refused: the answer would lack the logprobs the client asked for           |
 * | response_format text              | dropped: it is the default                                                 |
 * | response_format json_schema       | -> `output_config.format` (structured outputs); models without it refuse   |
 * |                                   | the request before this builder (../target-params.ts), and failover goes on|
 * | response_format json_object       | refused: structured outputs need a schema, and prose would break the parser|
 * | n > 1                             | refused by the gateway's own validation before any adapter                 |
 * | image `detail`                    | dropped: the API sizes images itself                                       |
 * | input_audio parts                 | refused: Claude takes no audio                                             |
 * | file parts                        | PDF `file_data` data: URL -> `document` block; anything else refused       |
 */
import type { ChatRequest, FunctionTool, ToolChoice } from '../../openai/chat-types.js';
import { anthropicThinkingBudget } from '../reasoning-effort.js';
import { requestRefused } from './errors.js';
import { toConversation } from './messages.js';

export type AnthropicApiVersion = '2026-10-21' | '2023-06-01';

export interface MessagesBodyOptions {
  model: string;
  stream: boolean;
  apiVersion: AnthropicApiVersion;
  /** The trimmed continuation prefill, appended as the final assistant turn; null for none. */
  prefill: string | null;
}

export function buildMessagesBody(
  request: ChatRequest & { max_tokens: number },
  options: MessagesBodyOptions,
): Record<string, unknown> {
  refuseUnsupported(request);
  const { system, messages } = toConversation(request.messages, options.prefill);
  const body: Record<string, unknown> = { model: options.model, max_tokens: request.max_tokens };
  if (system !== null) body.system = system;
  body.messages = messages;
  const stop = request.stop;
  if (stop !== undefined && stop !== null) body.stop_sequences = typeof stop === 'string' ? [stop] : stop;
  // Null: the target takes no sampling parameter here (../target-params.ts decides, per model and thinking).
  if (options.apiVersion === '2023-06-01') {
    if (request.top_p !== null && request.top_p < 1) body.top_p = request.top_p;
    else if (request.temperature !== null) body.temperature = Math.min(request.temperature, 1);
  }
  // Structured outputs; which models take it is decided before (../model-capabilities.ts `jsonSchema`).
  if (request.response_format?.type === 'json_schema') {
    body.output_config = { format: { type: 'json_schema', schema: request.response_format.json_schema.schema ?? { type: 'object' } } };
  }
  const thinking = thinkingOf(request, options.prefill);
  if (thinking !== null) body.thinking = thinking;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map(toTool);
    const choice = toToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (choice !== null) body.tool_choice = choice;
  }
  if (request.user !== undefined && request.user.length > 0) body.metadata = { user_id: request.user };
  if (options.stream) body.stream = true;
  return body;
}

/**
 * `reasoning_effort` -> extended thinking with a budget (../reasoning-effort.ts). Not with a prefill (Anthropic
 * refuses prefilled answers while thinking), nor while a tool loop is under way: the API then wants the
 * previous turn's thinking blocks back, which an OpenAI client never kept.
 */
function thinkingOf(request: ChatRequest & { max_tokens: number }, prefill: string | null): Record<string, unknown> | null {
  const effort = request.reasoning_effort;
  if (effort === undefined || prefill !== null) return null;
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return null;
  const budget = anthropicThinkingBudget(effort, request.max_tokens);
  return budget === null ? null : { type: 'enabled', budget_tokens: budget };
}

function refuseUnsupported(request: ChatRequest): void {
  if (request.logit_bias && Object.keys(request.logit_bias).length > 0) {
    throw requestRefused("'logit_bias' has no equivalent (token ids belong to another tokenizer)");
  }
  if (request.logprobs === true || (request.top_logprobs !== undefined && request.top_logprobs !== null)) {
    throw requestRefused("'logprobs' are not available from Anthropic models");
  }
  if (request.response_format?.type === 'json_object') {
    throw requestRefused("'response_format' json_object has no equivalent on Claude models (json_schema has)");
  }
}

/** Anthropic requires an `input_schema`; a function without parameters takes an empty object. */
function toTool(tool: FunctionTool): Record<string, unknown> {
  const out: Record<string, unknown> = { name: tool.function.name };
  if (tool.function.description !== undefined) out.description = tool.function.description;
  out.input_schema = tool.function.parameters ?? { type: 'object', properties: {} };
  return out;
}

function toToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Record<string, unknown> | null {
  const single = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...single } : null;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...single };
  if (choice === 'required') return { type: 'any', ...single };
  return { type: 'tool', name: choice.function.name, ...single };
}
