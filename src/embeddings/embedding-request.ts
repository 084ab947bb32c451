/**
 * The body of POST /v1/embeddings, as OpenAI takes it: `input` as a string or a list of strings (at most
 * 2,048, none empty), `dimensions`, `encoding_format` (float or base64), `user`. Token-id inputs (lists of
 * integers) are refused: each target counts tokens with its own tokenizer, so only text means the same to all.
 */
import { z } from 'zod';
import { invalidRequest } from '../openai/errors.js';
import { safeParseReporting, validationError } from '../openai/validation-errors.js';

export const MAX_EMBEDDING_INPUTS = 2048;
/** The largest vectors asked for (OpenAI's and Gemini's largest models give 3,072). */
export const MAX_EMBEDDING_DIMENSIONS = 8192;
/**
 * Numbers one answer may carry when `dimensions` is set (2,048 inputs of 3,072): an answer is built whole in
 * memory, and past this its JSON approaches what a string can hold.
 */
export const MAX_EMBEDDING_VALUES = MAX_EMBEDDING_INPUTS * 3072;

const schema = z
  .object({
    model: z.string().min(1),
    // Checked below, item by item, so a refusal names the input at fault.
    input: z.union([z.string(), z.array(z.unknown())]),
    dimensions: z.number().int().min(1).max(MAX_EMBEDDING_DIMENSIONS).nullable().optional(),
    encoding_format: z.enum(['float', 'base64']).nullable().optional(),
    user: z.string().max(256).nullable().optional(),
  })
  .strict();

export interface EmbeddingRequest {
  model: string;
  inputs: string[];
  dimensions: number | null;
  encodingFormat: 'float' | 'base64';
  user: string | null;
}

const TOKEN_IDS = 'Token-id inputs are not supported: send the text (each target counts tokens with its own tokenizer).';

function inputOf(item: unknown, param: string): string {
  if (typeof item === 'string') {
    if (item.length === 0) throw invalidRequest(`'${param}' must not be empty.`, param, 'invalid_value');
    return item;
  }
  if (typeof item === 'number' || (Array.isArray(item) && item.every((t) => typeof t === 'number'))) {
    throw invalidRequest(TOKEN_IDS, param, 'unsupported_value');
  }
  throw invalidRequest(`Invalid type for '${param}': expected a string.`, param, 'invalid_type');
}

export function parseEmbeddingRequest(body: unknown): EmbeddingRequest {
  const parsed = safeParseReporting(schema, body);
  if (!parsed.success) throw validationError(parsed.error);
  const b = parsed.data;
  let inputs: string[];
  if (typeof b.input === 'string') inputs = [inputOf(b.input, 'input')];
  else {
    if (b.input.length === 0) throw invalidRequest("'input' must hold at least one input.", 'input', 'invalid_value');
    // A flat list of integers is one token-id input, refused as such.
    if (b.input.every((t) => typeof t === 'number')) throw invalidRequest(TOKEN_IDS, 'input', 'unsupported_value');
    if (b.input.length > MAX_EMBEDDING_INPUTS) {
      throw invalidRequest(`'input' holds ${b.input.length} inputs; at most ${MAX_EMBEDDING_INPUTS} are taken per request.`, 'input', 'array_above_max_length');
    }
    inputs = b.input.map((item, i) => inputOf(item, `input[${i}]`));
  }
  const dimensions = b.dimensions ?? null;
  if (dimensions !== null && dimensions * inputs.length > MAX_EMBEDDING_VALUES) {
    throw invalidRequest(
      `${inputs.length} inputs of ${dimensions} dimensions is more than one answer may carry (${MAX_EMBEDDING_VALUES} numbers); send fewer inputs per request.`,
      'dimensions',
      'invalid_value',
    );
  }
  return { model: b.model, inputs, dimensions, encodingFormat: b.encoding_format ?? 'float', user: b.user ?? null };
}
