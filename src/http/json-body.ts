import type { Context } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { invalidRequest } from '../openai/errors.js';

/** Reads a JSON body; malformed JSON is the client's fault and says where it broke. */
export async function readJson(c: Context<AppEnv>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') throw invalidRequest('The request body is empty: send a JSON object.', null, 'invalid_json');
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidRequest(`The request body is not valid JSON: ${e instanceof Error ? e.message : 'parse error'}.`, null, 'invalid_json');
  }
}
