/**
 * Validation of the sandbox server's request body: enough of OpenAI's schema to simulate an answer and to
 * refuse malformed input with OpenAI's error envelope. Unknown fields (temperature, user, ...) are accepted
 * and ignored, as a lenient compatible server would.
 */
import { z } from 'zod';
import type { SimulationInput } from './simulator.js';

const part = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('refusal'), refusal: z.string() }),
  z.object({
    type: z.literal('image_url'),
    image_url: z.object({ url: z.string(), detail: z.enum(['auto', 'low', 'high']).optional() }),
  }),
  z.object({ type: z.literal('input_audio'), input_audio: z.object({ data: z.string(), format: z.string() }) }),
  z.object({
    type: z.literal('file'),
    file: z.object({ file_id: z.string().optional(), file_data: z.string().optional(), filename: z.string().optional() }),
  }),
]);

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(part), z.null()]).default(null),
  name: z.string().optional(),
  tool_calls: z.array(toolCall).optional(),
  tool_call_id: z.string().optional(),
  refusal: z.string().nullable().optional(),
});

const tool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const positiveInt = z.number().int().min(1).nullable().optional();

const body = z.object({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: positiveInt,
  max_completion_tokens: positiveInt,
  n: z.literal(1).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  tools: z.array(tool).optional(),
  tool_choice: z
    .union([
      z.enum(['none', 'auto', 'required']),
      z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
    ])
    .optional(),
});

export interface SandboxRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  input: SimulationInput;
}

export type SandboxRequestParse = { ok: true; request: SandboxRequest } | { ok: false; message: string; param: string | null };

export function parseSandboxRequest(json: unknown): SandboxRequestParse {
  const result = body.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const param = issue ? formatPath(issue.path) : null;
    return { ok: false, message: `${param ? `${param}: ` : ''}${issue?.message ?? 'invalid request'}`, param };
  }
  const b = result.data;
  return {
    ok: true,
    request: {
      model: b.model,
      stream: b.stream === true,
      includeUsage: b.stream_options?.include_usage === true,
      input: {
        messages: b.messages,
        max_tokens: b.max_completion_tokens ?? b.max_tokens ?? null,
        seed: b.seed ?? null,
        ...(b.tools ? { tools: b.tools } : {}),
        ...(b.tool_choice ? { tool_choice: b.tool_choice } : {}),
      },
    },
  };
}

/** OpenAI's `param` spelling: `messages[0].content`. */
function formatPath(path: readonly PropertyKey[]): string | null {
  if (path.length === 0) return null;
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : `${i === 0 ? '' : '.'}${String(k)}`)).join('');
}
