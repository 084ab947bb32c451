/**
 * A Gemini API upstream (v1beta `POST /models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`) that checks requests as the API does and answers as ./answer-plan.ts
 * decides.
 *
 * Checked as Gemini checks them: unknown fields at the top level, in `generationConfig` and in
 * `thinkingConfig` ("Invalid JSON payload received. Unknown name ..."); roles `user` and `model` only; a part
 * holds exactly one kind of data; a function call turn comes right after a user turn or a function response
 * turn, and is answered by as many function responses in the next turn; `responseJsonSchema` needs
 * `responseMimeType: application/json` and excludes `responseSchema`; the sampling ranges; `thinkingConfig` per
 * model generation (2.5: `thinkingBudget`, Flash 0..24576 or -1, Pro 128..32768 or -1 and no 0, no
 * `thinkingLevel`; 3: either).
 *
 * Thinking as the 2.5 and 3 models do it: on by default (dynamic), off only with `thinkingBudget: 0` on a
 * Flash model; thinking is always billed (`thoughtsTokenCount`, outside `candidatesTokenCount`), but the
 * thought summaries (parts with `thought: true`) are sent only when `includeThoughts` is true. A function call
 * made while thinking carries a `thoughtSignature`. Usage reads half the prompt from the implicit cache
 * (`cachedContentTokenCount`). Stream chunks carry running usage totals, the last one with the finishReason.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord, pieces, planAnswer, thinkingText, type JsonSchema, type PlanInput, type ToolResult } from './answer-plan.js';
import { outputTokensOf, promptTokensOf, sendJson, sendSse, type ExpectedUsage, type Recorded, type Recording } from './recording.js';

const REQUEST_FIELDS = new Set([
  'contents', 'tools', 'toolConfig', 'safetySettings', 'systemInstruction', 'generationConfig', 'cachedContent', 'labels',
]);

const GENERATION_FIELDS = new Set([
  'stopSequences', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'candidateCount',
  'maxOutputTokens', 'temperature', 'topP', 'topK', 'seed', 'presencePenalty', 'frequencyPenalty', 'responseLogprobs',
  'logprobs', 'enableEnhancedCivicAnswers', 'speechConfig', 'thinkingConfig', 'mediaResolution', 'imageConfig',
]);

const THINKING_FIELDS = new Set(['includeThoughts', 'thinkingBudget', 'thinkingLevel']);

const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const PART_FIELDS = new Set([...PART_DATA, 'thought', 'thoughtSignature', 'videoMetadata', 'mediaResolution']);

/** Thinking tokens billed when the model decides how much to think (no budget, or -1). */
const DYNAMIC_THOUGHT_TOKENS = 40;
/** Thinking tokens billed at most under an explicit budget; a smaller budget is used up whole. */
const MAX_THOUGHT_TOKENS = 160;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly grpcStatus: string,
    message: string,
  ) {
    super(message);
  }
}

interface Thinking {
  /** Billed thinking tokens; 0 when the model does not think. */
  tokens: number;
  /** Whether thought summaries go into the answer. */
  show: boolean;
}

export function geminiGenerateHandler(recording: Recording) {
  let served = 0;
  return async (req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> => {
    const n = ++served;
    const url = req.url ?? '';
    const record: Recorded = { kind: 'gemini', method: req.method ?? '', path: url, headers: req.headers, body: {}, stream: false, reply: { status: 0 } };
    recording.all.push(record);
    try {
      const route = /\/models\/([^/:?]+):(generateContent|streamGenerateContent)(\?.*)?$/.exec(url);
      if (req.method !== 'POST' || route === null) throw new Refusal(404, 'NOT_FOUND', `Method not found: ${req.method ?? ''} ${url}`);
      const model = decodeURIComponent(route[1] ?? '');
      const stream = route[2] === 'streamGenerateContent';
      // Without alt=sse the stream is a JSON array of the chunks; this upstream only speaks SSE.
      if (stream && !new URLSearchParams((route[3] ?? '').slice(1)).has('alt')) {
        throw new Refusal(400, 'INVALID_ARGUMENT', 'This recording upstream streams only with alt=sse.');
      }
      if (!/^gemini-(2\.5|[3-9])/.test(model)) {
        throw new Refusal(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for generateContent.`);
      }
      const body = parseBody(raw);
      record.body = body;
      record.stream = stream;
      const thinking = checkRequest(body, model);
      const input = planInput(body);
      const plan = planAnswer(input);
      const thought = thinking.tokens > 0 && thinking.show ? thinkingText(input.userText) : null;
      const textPieces = plan.kind === 'text' ? pieces(plan.text) : [];
      const candidates = outputTokensOf(plan, textPieces.length);
      const prompt = promptTokensOf(raw);
      const cached = Math.floor(prompt / 2);
      const usage: ExpectedUsage = {
        prompt_tokens: prompt,
        completion_tokens: candidates + thinking.tokens,
        cached_tokens: cached,
        reasoning_tokens: thinking.tokens,
      };
      // Gemini's Developer API gives function calls no id: the gateway names them.
      const toolCall = plan.kind === 'tool' ? { id: '', name: plan.name, args: plan.args } : undefined;
      record.reply = {
        status: 200,
        plan,
        text: plan.kind === 'text' ? plan.text : null,
        reasoningText: thought,
        usage,
        ...(toolCall ? { toolCall } : {}),
      };
      const responseId = `rec${n}gem${String(n * 7919).padStart(8, '0')}`;
      const usageMetadata = (candidatesSoFar: number): Record<string, unknown> => ({
        promptTokenCount: prompt,
        candidatesTokenCount: candidatesSoFar,
        totalTokenCount: prompt + candidatesSoFar + thinking.tokens,
        cachedContentTokenCount: cached,
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
        cacheTokensDetails: [{ modality: 'TEXT', tokenCount: cached }],
        ...(thinking.tokens > 0 ? { thoughtsTokenCount: thinking.tokens } : {}),
      });
      const callPart = toolCall
        ? {
            functionCall: { name: toolCall.name, args: toolCall.args },
            ...(thinking.tokens > 0 ? { thoughtSignature: Buffer.from(`sig-rec${n}`).toString('base64') } : {}),
          }
        : null;
      const chunk = (parts: unknown[], candidatesSoFar: number, finish: boolean): Record<string, unknown> => ({
        candidates: [{ content: { parts, role: 'model' }, ...(finish ? { finishReason: 'STOP' } : {}), index: 0 }],
        usageMetadata: usageMetadata(candidatesSoFar),
        modelVersion: model,
        responseId,
      });
      if (!stream) {
        const parts: unknown[] = [];
        if (thought !== null) parts.push({ text: thought, thought: true });
        if (callPart) parts.push(callPart);
        else parts.push({ text: plan.kind === 'text' ? plan.text : '' });
        sendJson(res, 200, chunk(parts, candidates, true));
        return;
      }
      // Gemini frames its events with CRLF.
      const event = (payload: Record<string, unknown>): string => `data: ${JSON.stringify(payload)}\r\n\r\n`;
      let sse = '';
      if (thought !== null) for (const piece of pieces(thought)) sse += event(chunk([{ text: piece, thought: true }], 0, false));
      if (callPart) {
        sse += event(chunk([callPart], candidates, true));
      } else {
        textPieces.forEach((piece, i) => {
          const last = i === textPieces.length - 1;
          sse += event(chunk([{ text: piece }], last ? candidates : i + 1, last));
        });
      }
      await sendSse(res, sse);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const error = { error: { code: err.status, message: err.message, status: err.grpcStatus } };
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
    throw new Refusal(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.');
  }
  if (!isRecord(body)) throw new Refusal(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Expected an object.');
  return body;
}

function unknownField(fields: ReadonlySet<string>, value: Record<string, unknown>, where: string | null): void {
  for (const key of Object.keys(value)) {
    if (!fields.has(key)) {
      const at = where === null ? '' : ` at '${where}'`;
      throw new Refusal(400, 'INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${key}"${at}: Cannot find field.`);
    }
  }
}

/** Refuses what the API refuses; returns how the model thinks for this request. */
function checkRequest(body: Record<string, unknown>, model: string): Thinking {
  unknownField(REQUEST_FIELDS, body, null);
  checkContents(body.contents);
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new Refusal(400, 'INVALID_ARGUMENT', "Invalid value at 'tools': expected a list.");
    for (const tool of body.tools) {
      const declarations = isRecord(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [];
      for (const d of declarations) {
        if (!isRecord(d) || typeof d.name !== 'string' || d.name.length === 0) {
          throw new Refusal(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.');
        }
        if (d.parameters !== undefined && d.parametersJsonSchema !== undefined) {
          throw new Refusal(400, 'INVALID_ARGUMENT', `function_declarations[${d.name}]: parameters and parameters_json_schema cannot both be set.`);
        }
      }
    }
  }
  const config = body.generationConfig;
  if (config === undefined) return thinkingOf(undefined, model);
  if (!isRecord(config)) throw new Refusal(400, 'INVALID_ARGUMENT', "Invalid value at 'generation_config': expected an object.");
  unknownField(GENERATION_FIELDS, config, 'generation_config');
  const range = (key: string, min: number, max: number): void => {
    const v = config[key];
    if (v !== undefined && (typeof v !== 'number' || v < min || v > max)) {
      throw new Refusal(400, 'INVALID_ARGUMENT', `* GenerateContentRequest.generation_config.${key}: must be in [${min}, ${max}].`);
    }
  };
  range('temperature', 0, 2);
  range('topP', 0, 1);
  const max = config.maxOutputTokens;
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) {
    throw new Refusal(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.generation_config.max_output_tokens: must be a positive integer.');
  }
  if (config.responseJsonSchema !== undefined) {
    if (config.responseSchema !== undefined) {
      throw new Refusal(400, 'INVALID_ARGUMENT', 'response_schema and response_json_schema cannot both be set.');
    }
    if (config.responseMimeType !== 'application/json') {
      throw new Refusal(400, 'INVALID_ARGUMENT', 'response_mime_type must be application/json when response_json_schema is set.');
    }
  }
  return thinkingOf(config.thinkingConfig, model);
}

function thinkingOf(raw: unknown, model: string): Thinking {
  const pro = model.includes('pro');
  const v25 = model.startsWith('gemini-2.5');
  if (raw === undefined) return { tokens: DYNAMIC_THOUGHT_TOKENS, show: false };
  if (!isRecord(raw)) throw new Refusal(400, 'INVALID_ARGUMENT', "Invalid value at 'generation_config.thinking_config': expected an object.");
  unknownField(THINKING_FIELDS, raw, 'generation_config.thinking_config');
  const show = raw.includeThoughts === true;
  if (raw.thinkingLevel !== undefined) {
    if (v25) throw new Refusal(400, 'INVALID_ARGUMENT', 'Thinking level is not supported for this model.');
    if (raw.thinkingBudget !== undefined) {
      throw new Refusal(400, 'INVALID_ARGUMENT', 'thinking_budget and thinking_level cannot both be set.');
    }
    return { tokens: DYNAMIC_THOUGHT_TOKENS, show };
  }
  const budget = raw.thinkingBudget;
  if (budget === undefined || budget === -1) return { tokens: DYNAMIC_THOUGHT_TOKENS, show };
  if (typeof budget !== 'number' || !Number.isInteger(budget)) {
    throw new Refusal(400, 'INVALID_ARGUMENT', "Invalid value at 'generation_config.thinking_config.thinking_budget': expected an integer.");
  }
  const [min, maxBudget] = pro ? [128, 32_768] : [0, 24_576];
  if (budget === 0 && pro) throw new Refusal(400, 'INVALID_ARGUMENT', 'Budget 0 is invalid. This model only works in thinking mode.');
  if (budget < min || budget > maxBudget) {
    throw new Refusal(400, 'INVALID_ARGUMENT', `The thinking budget ${budget} is invalid. Please choose a value between ${min} and ${maxBudget}.`);
  }
  return { tokens: Math.min(budget, MAX_THOUGHT_TOKENS), show };
}

function checkContents(contents: unknown): void {
  if (!Array.isArray(contents) || contents.length === 0) {
    throw new Refusal(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified');
  }
  /** Function calls of the previous turn, when it was a function call turn. */
  let calls = 0;
  let previous: 'user' | 'model' | 'function-response' | null = null;
  contents.forEach((c: unknown, i) => {
    if (!isRecord(c) || (c.role !== 'user' && c.role !== 'model')) {
      throw new Refusal(400, 'INVALID_ARGUMENT', `Please use a valid role: user, model. (contents[${i}])`);
    }
    if (!Array.isArray(c.parts) || c.parts.length === 0) {
      throw new Refusal(400, 'INVALID_ARGUMENT', `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`);
    }
    let callsHere = 0;
    let responses = 0;
    for (const part of c.parts) {
      if (!isRecord(part)) throw new Refusal(400, 'INVALID_ARGUMENT', `Invalid value at 'contents[${i}].parts': expected an object.`);
      unknownField(PART_FIELDS, part, `contents[${i}].parts`);
      const data = PART_DATA.filter((k) => part[k] !== undefined);
      if (data.length !== 1) {
        throw new Refusal(400, 'INVALID_ARGUMENT', `* GenerateContentRequest.contents[${i}].parts: a part must hold exactly one of ${PART_DATA.join(', ')}.`);
      }
      if (part.functionCall !== undefined) callsHere++;
      if (part.functionResponse !== undefined) responses++;
    }
    if (callsHere > 0 && (c.role !== 'model' || (previous !== 'user' && previous !== 'function-response'))) {
      throw new Refusal(
        400,
        'INVALID_ARGUMENT',
        'Please ensure that function call turn comes immediately after a user turn or after a function response turn.',
      );
    }
    if (responses > 0 && (c.role !== 'user' || calls === 0)) {
      throw new Refusal(400, 'INVALID_ARGUMENT', 'Please ensure that function response turn comes immediately after a function call turn.');
    }
    if (calls > 0 && responses !== calls) {
      throw new Refusal(
        400,
        'INVALID_ARGUMENT',
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      );
    }
    calls = callsHere;
    previous = responses > 0 ? 'function-response' : c.role;
  });
}

function planInput(body: Record<string, unknown>): PlanInput {
  const contents = (body.contents as Record<string, unknown>[]) ?? [];
  const partsOf = (c: Record<string, unknown> | undefined): Record<string, unknown>[] =>
    Array.isArray(c?.parts) ? c.parts.filter(isRecord) : [];
  const last = contents.at(-1);
  const results: ToolResult[] = last?.role === 'user'
    ? partsOf(last).flatMap((p) => (isRecord(p.functionResponse) ? [resultOf(p.functionResponse)] : []))
    : [];
  const lastUser = [...contents].reverse().find((c) => c.role === 'user' && partsOf(c).some((p) => typeof p.text === 'string'));
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: unknown) =>
    (isRecord(t) && Array.isArray(t.functionDeclarations) ? t.functionDeclarations : []).flatMap((d: unknown) => {
      if (!isRecord(d) || typeof d.name !== 'string') return [];
      const schema = isRecord(d.parametersJsonSchema) ? d.parametersJsonSchema : isRecord(d.parameters) ? d.parameters : null;
      return [{ name: d.name, parameters: schema }];
    }),
  );
  const calling = isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
  const allowed = Array.isArray(calling.allowedFunctionNames) ? calling.allowedFunctionNames : [];
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  let jsonSchema: JsonSchema | null = null;
  if (config.responseMimeType === 'application/json') {
    const schema = isRecord(config.responseJsonSchema) ? config.responseJsonSchema : isRecord(config.responseSchema) ? config.responseSchema : null;
    jsonSchema = schema ?? { type: 'object', properties: { answer: { type: 'string' } } };
  }
  return {
    userText: lastUser ? partsOf(lastUser).map((p) => (typeof p.text === 'string' ? p.text : '')).join('') : '',
    toolResults: results.length > 0 ? results : null,
    tools,
    forcedTool: calling.mode === 'ANY' && typeof allowed[0] === 'string' ? allowed[0] : null,
    toolsOff: calling.mode === 'NONE',
    jsonSchema,
  };
}

/** A function response's content: its `output` (what the API documents for a result) or the whole response. */
function resultOf(response: Record<string, unknown>): ToolResult {
  const name = typeof response.name === 'string' ? response.name : 'tool';
  const value = isRecord(response.response) ? response.response : {};
  return { name, content: typeof value.output === 'string' ? value.output : JSON.stringify(value) };
}
