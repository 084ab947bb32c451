import type { Context } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { invalidRequest } from '../openai/errors.js';

/** Reads a JSON object body; malformed JSON is the client's fault and says where it broke. */
export async function readJson(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') throw invalidRequest('The request body is empty: send a JSON object.', null, 'invalid_json');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw invalidRequest(`The request body is not valid JSON: ${e instanceof Error ? e.message : 'parse error'}.`, null, 'invalid_json');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object.', null, 'invalid_body');
  }
  return body as Record<string, unknown>;
}
