/**
 * The body of POST /v1/embeddings, as OpenAI takes it: `input` as a string or a list of strings (at most
 * 2,048, none empty), `dimensions`, `encoding_format` (float or base64), `user`. Token-id inputs (lists of
 * integers) are refused: each target counts tokens with its own tokenizer, so only text means the same to all.
 */
import { z } from 'zod';
import { invalidRequest } from '../openai/errors.js';
import { validationError } from '../openai/validation-errors.js';

export const MAX_EMBEDDING_INPUTS = 2048;

const text = z.string().min(1, 'must not be empty');
const tokens = z.array(z.number().int());

const schema = z
  .object({
    model: z.string().min(1),
    input: z.union([text, z.array(z.union([text, tokens])).min(1, 'must hold at least one input').max(MAX_EMBEDDING_INPUTS), tokens]),
    dimensions: z.number().int().min(1).max(65_536).nullable().optional(),
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

export function parseEmbeddingRequest(body: unknown): EmbeddingRequest {
  const parsed = schema.safeParse(body, { reportInput: true });
  if (!parsed.success) throw validationError(parsed.error);
  const b = parsed.data;
  const refuseTokens = (param: string): never => {
    throw invalidRequest('Token-id inputs are not supported: send the text (each target counts tokens with its own tokenizer).', param, 'unsupported_value');
  };
  const list: readonly (string | number | number[])[] = typeof b.input === 'string' ? [b.input] : b.input;
  const inputs = list.map((item, i) => (typeof item === 'string' ? item : typeof item === 'number' ? refuseTokens('input') : refuseTokens(`input[${i}]`)));
  return { model: b.model, inputs, dimensions: b.dimensions ?? null, encodingFormat: b.encoding_format ?? 'float', user: b.user ?? null };
}
