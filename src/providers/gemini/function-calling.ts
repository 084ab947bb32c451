/**
 * OpenAI tools, tool_choice, assistant tool calls and tool results -> Gemini function calling
 * (`functionDeclarations`, `toolConfig.functionCallingConfig`, `functionCall` and `functionResponse` parts).
 */
import type { FunctionTool, ToolCall, ToolChoice } from '../../openai/chat-types.js';
import { isRecord } from '../upstream-failures.js';
import { untranslatable } from './errors.js';
import type { GeminiFunctionDeclaration, GeminiPart, GeminiToolConfig } from './wire-types.js';

/**
 * Gemini 3 refuses (400) a replayed `functionCall` part without the `thoughtSignature` it was generated with,
 * and OpenAI's protocol has nowhere to carry one back to us. Google documents this value for exactly that case
 * (history from another model, or rebuilt by the client): it skips the check. Older models accept it too.
 * See https://ai.google.dev/gemini-api/docs/thought-signatures (FAQ).
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Parameters go as `parametersJsonSchema`, which takes JSON Schema as OpenAI clients write it, rather than as
 * `parameters`, Gemini's OpenAPI subset, which refuses common keywords (`additionalProperties`, `$ref`,
 * `anyOf` in older models) and would need a lossy rewrite. `strict` is dropped: Gemini has no per-function
 * switch, and its arguments follow the schema anyway.
 */
export function functionDeclarations(tools: readonly FunctionTool[]): GeminiFunctionDeclaration[] {
  return tools.map(({ function: f }) => ({
    name: f.name,
    ...(f.description !== undefined ? { description: f.description } : {}),
    ...(f.parameters !== undefined ? { parametersJsonSchema: f.parameters } : {}),
  }));
}

/** `required` and a named function both map to ANY: Gemini must call a function, from the allowed list if any. */
export function toolConfig(choice: ToolChoice | undefined): GeminiToolConfig | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

/**
 * An assistant message's tool calls as `functionCall` parts. The sentinel signature goes on the first call of
 * each model turn, where Gemini puts the real one (parallel calls carry a single signature).
 */
export function functionCallParts(calls: readonly ToolCall[], where: string): GeminiPart[] {
  return calls.map((call, i) => ({
    functionCall: { id: call.id, name: call.function.name, args: callArguments(call, `${where}.tool_calls[${i}]`) },
    ...(i === 0 ? { thoughtSignature: SKIP_THOUGHT_SIGNATURE } : {}),
  }));
}

/**
 * A tool result as a `functionResponse` part. OpenAI's is text; Gemini documents the `output` key for a
 * function's result, so the text goes there unchanged rather than being reinterpreted as JSON.
 */
export function functionResponsePart(callId: string, name: string, output: string): GeminiPart {
  return { functionResponse: { id: callId, name, response: { output } } };
}

/** Gemini takes arguments as an object; OpenAI sends them as a JSON string, empty for a call without any. */
function callArguments(call: ToolCall, where: string): Record<string, unknown> {
  const text = call.function.arguments.trim();
  if (text.length === 0) return {};
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    throw untranslatable(`${where}.function.arguments is not valid JSON; Gemini takes arguments as a JSON object`);
  }
  if (!isRecord(args)) throw untranslatable(`${where}.function.arguments is not a JSON object`);
  return args;
}
