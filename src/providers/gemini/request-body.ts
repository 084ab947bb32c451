/**
 * Gateway ChatRequest -> a Gemini `generateContent` body. What each OpenAI option becomes:
 *
 * | OpenAI                      | Gemini                        | decision                                           |
 * | --------------------------- | ----------------------------- | -------------------------------------------------- |
 * | system, developer messages  | `systemInstruction.parts`     | sent in order; their place among turns is lost (1) |
 * | user, assistant, tool       | `contents`: user, model, user | sent; runs of one role merged into one turn        |
 * | message `name`              | -                             | dropped: Gemini has no participant names           |
 * | image_url data: / http(s)   | `inlineData` / `fileData`     | sent; other schemes refused (./media-parts.ts)     |
 * | image_url `detail`          | -                             | dropped: no per-part resolution on this path       |
 * | input_audio, inline file    | `inlineData`                  | sent; OpenAI file ids refused                      |
 * | temperature, top_p          | `temperature`, `topP`         | sent when set; the same ranges (0..2, 0..1)        |
 * | max_tokens                  | `maxOutputTokens`             | always sent: the output bound (2)                  |
 * | reasoning_effort            | `thinkingConfig`              | thinkingBudget (2.5) / thinkingLevel (3) (7)       |
 * | stop                        | `stopSequences`               | sent (at most 5: ../target-params.ts keeps 5)      |
 * | seed                        | `seed`                        | sent                                               |
 * | presence/frequency_penalty  | `presence/frequencyPenalty`   | sent (3)                                           |
 * | response_format json_object | `responseMimeType`            | sent as application/json                           |
 * | response_format json_schema | + `responseJsonSchema`        | sent; name, description, strict dropped (4)        |
 * | tools                       | `functionDeclarations`        | sent (./function-calling.ts); strict dropped       |
 * | tool_choice                 | `functionCallingConfig.mode`  | auto/none/required/named: AUTO/NONE/ANY/ANY (5)    |
 * | parallel_tool_calls         | -                             | dropped: no Gemini switch (6)                      |
 * | user, metadata              | -                             | dropped: they only label the request               |
 * | logit_bias (non-empty)      | -                             | refused, 400: its keys are OpenAI token ids        |
 * | logprobs: true              | -                             | refused, 400: the contract cannot return them      |
 * | n > 1                       | -                             | refused earlier, by request validation             |
 *
 * (1) Gemini has one system instruction for the whole conversation.
 * (2) Thinking tokens count against it too, so the bound holds for what is billed as output.
 * (3) Some models lack penalties and answer 400, which reaches the client as a clear refusal.
 * (4) Gemini names no schema, and constrains the output to the schema whenever one is given.
 * (5) A named function is ANY with `allowedFunctionNames: [name]`: Gemini must call that one.
 * (6) Gemini may return several calls; an OpenAI client handles a list of calls either way.
 * (7) ../reasoning-effort.ts: a budget that is a share of the output bound, or the level nearest the effort.
 * Which options reach this builder at all (sampling defaults, stop count, thinking) is decided per target
 * beforehand, in ../target-params.ts.
 */
import { continuationMessages } from '../continuation.js';
import { geminiThinkingConfig } from '../reasoning-effort.js';
import type { UpstreamCall } from '../contract.js';
import type { ChatMessage, ChatRequest, ContentPart, ResponseFormat } from '../../openai/chat-types.js';
import { untranslatable } from './errors.js';
import { functionCallParts, functionDeclarations, functionResponsePart, toolConfig } from './function-calling.js';
import { textParts, userParts } from './media-parts.js';
import type { GeminiContent, GeminiGenerationConfig, GeminiPart, GeminiRequestBody } from './wire-types.js';

export function buildGeminiBody(call: UpstreamCall): GeminiRequestBody {
  const { request } = call;
  refuseUnsupported(request);
  // Gemini has no assistant prefill: a continuation is the partial answer as a model turn, then an instruction.
  const partial = call.continuation?.partial;
  const messages = partial !== undefined ? continuationMessages(request.messages, partial) : request.messages;
  const { system, contents } = conversation(messages);
  if (contents.length === 0) throw untranslatable('Gemini needs at least one non-empty user or assistant message');
  const body: GeminiRequestBody = { contents, generationConfig: generationConfig(request, call.model) };
  if (system.length > 0) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  // Without declarations a toolConfig is meaningless, and tool_choice none/auto is valid without tools.
  if (request.tools && request.tools.length > 0) {
    body.tools = [{ functionDeclarations: functionDeclarations(request.tools) }];
    const config = toolConfig(request.tool_choice);
    if (config) body.toolConfig = config;
  }
  return body;
}

function refuseUnsupported(request: ChatRequest): void {
  if (request.logit_bias && Object.keys(request.logit_bias).length > 0) {
    throw untranslatable("'logit_bias' has no Gemini equivalent (its keys are OpenAI token ids)");
  }
  if (request.logprobs === true) throw untranslatable("'logprobs' cannot be returned through this gateway's adapters");
}

function conversation(messages: readonly ChatMessage[]): { system: string[]; contents: GeminiContent[] } {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  /** Tool call id -> function name: Gemini's functionResponse names the function, OpenAI's tool message does not. */
  const callNames = new Map<string, string>();
  const append = (role: GeminiContent['role'], parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    // Gemini expects turns to alternate; OpenAI allows runs (several tool results, user after tool results).
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = plainText(m.content);
        if (text.length > 0) system.push(text);
        return;
      }
      case 'user':
        append('user', userParts(m.content, where));
        return;
      case 'assistant': {
        const parts = assistantText(m).flatMap(textParts);
        if (m.tool_calls && m.tool_calls.length > 0) {
          for (const c of m.tool_calls) callNames.set(c.id, c.function.name);
          parts.push(...functionCallParts(m.tool_calls, where));
        }
        append('model', parts);
        return;
      }
      case 'tool': {
        const id = m.tool_call_id ?? '';
        const name = callNames.get(id);
        if (name === undefined) {
          const why = "matches no earlier assistant tool call; Gemini needs the function's name";
          throw untranslatable(`${where}.tool_call_id '${id}' ${why}`);
        }
        append('user', [functionResponsePart(id, name, plainText(m.content))]);
        return;
      }
    }
  });
  return { system, contents };
}

/** An assistant turn's text: its content (text and refusal parts), else its refusal. */
function assistantText(m: ChatMessage): string[] {
  if (typeof m.content === 'string') return [m.content];
  if (Array.isArray(m.content)) return m.content.map(partText);
  return typeof m.refusal === 'string' ? [m.refusal] : [];
}

/** System, developer and tool messages hold text only (request validation checks it); parts are joined. */
function plainText(content: string | ContentPart[] | null): string {
  if (content === null) return '';
  return typeof content === 'string' ? content : content.map(partText).join('');
}

function partText(part: ContentPart): string {
  if (part.type === 'text') return part.text;
  if (part.type === 'refusal') return part.refusal;
  return '';
}

function generationConfig(request: ChatRequest & { max_tokens: number }, model: string): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = { maxOutputTokens: request.max_tokens };
  if (request.temperature !== null) config.temperature = request.temperature;
  if (request.top_p !== null) config.topP = request.top_p;
  if (request.reasoning_effort !== undefined) {
    config.thinkingConfig = geminiThinkingConfig(request.reasoning_effort, model, request.max_tokens);
  }
  if (request.stop !== undefined && request.stop !== null) {
    config.stopSequences = typeof request.stop === 'string' ? [request.stop] : request.stop;
  }
  if (request.seed !== undefined && request.seed !== null) config.seed = request.seed;
  if (request.presence_penalty !== undefined && request.presence_penalty !== null) {
    config.presencePenalty = request.presence_penalty;
  }
  if (request.frequency_penalty !== undefined && request.frequency_penalty !== null) {
    config.frequencyPenalty = request.frequency_penalty;
  }
  Object.assign(config, responseFormat(request.response_format));
  return config;
}

/**
 * `responseJsonSchema` takes JSON Schema as OpenAI clients write it; `responseSchema` would take only
 * Gemini's OpenAPI subset.
 */
function responseFormat(format: ResponseFormat | undefined): Partial<GeminiGenerationConfig> {
  if (format === undefined || format.type === 'text') return {};
  if (format.type === 'json_object') return { responseMimeType: 'application/json' };
  const schema = format.json_schema.schema;
  return { responseMimeType: 'application/json', ...(schema !== undefined ? { responseJsonSchema: schema } : {}) };
}
