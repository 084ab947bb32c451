import type { Context } from 'hono';
import type { AppEnv } from '../core/deps.js';
import { invalidRequest } from '../openai/errors.js';

/**
 * Nesting levels a body may have, the body object itself being level 1. JSON.parse takes any depth, but
 * JSON.stringify (token estimation, the upstream body) and the validators recurse, and a few thousand levels
 * overflow the stack. 32 leaves room for real tool parameter and response_format schemas: a schema nested
 * 13 objects deep fits (each object level is two JSON levels, `properties` and the property), where OpenAI's
 * structured outputs allow 10 and real tool schemas stay within 5 or so.
 */
export const MAX_JSON_DEPTH = 32;
/** Elements one array may hold: far above real messages, tools or stop lists, far below what costs seconds to validate. */
export const MAX_JSON_ARRAY_LENGTH = 10_000;
/** Members one object may hold, for the same reason. */
export const MAX_JSON_OBJECT_MEMBERS = 10_000;

/**
 * Reads a JSON object body; malformed JSON is the client's fault and says where it broke. Strings need no
 * limit of their own: the body limit (`server.max_body_bytes`) bounds them, and a long prompt is legitimate.
 */
export async function readJson(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  return parseJsonObject(await c.req.text());
}

/** A body's text as a JSON object, under the limits above. */
export function parseJsonObject(text: string): Record<string, unknown> {
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
  checkShape(body, 1);
  return body as Record<string, unknown>;
}

/** Where a limit was broken, collected while the check unwinds: `tools[0].function.parameters`. */
class ShapeBreach {
  readonly path: (string | number)[] = [];
  constructor(
    readonly code: 'json_too_deep' | 'json_array_too_long' | 'json_object_too_large',
    readonly what: string,
  ) {}
}

/**
 * Walks the parsed body. Recursion is safe: it goes no deeper than MAX_JSON_DEPTH + 1 before it refuses.
 * Only containers are visited, so a typical request costs microseconds.
 */
function checkShape(body: object, depth: number): void {
  try {
    walk(body, depth);
  } catch (e) {
    if (!(e instanceof ShapeBreach)) throw e;
    const where = pathText(e.path);
    const top = e.path[0];
    throw invalidRequest(
      `The request body ${e.what}${where === '' ? '' : ` (at ${where})`}: simplify it.`,
      typeof top === 'string' ? top : null,
      e.code,
    );
  }
}

function walk(value: object, depth: number): void {
  if (depth > MAX_JSON_DEPTH) throw new ShapeBreach('json_too_deep', `nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) {
    if (value.length > MAX_JSON_ARRAY_LENGTH) {
      throw new ShapeBreach('json_array_too_long', `has an array of more than ${MAX_JSON_ARRAY_LENGTH} elements`);
    }
    for (let i = 0; i < value.length; i++) visit(value[i] as unknown, depth, i);
    return;
  }
  let members = 0;
  for (const key in value) {
    if (++members > MAX_JSON_OBJECT_MEMBERS) {
      throw new ShapeBreach('json_object_too_large', `has an object of more than ${MAX_JSON_OBJECT_MEMBERS} members`);
    }
    visit((value as Record<string, unknown>)[key], depth, key);
  }
}

function visit(child: unknown, depth: number, step: string | number): void {
  if (typeof child !== 'object' || child === null) return;
  try {
    walk(child, depth + 1);
  } catch (e) {
    if (e instanceof ShapeBreach) e.path.unshift(step);
    throw e;
  }
}

/** The path as a client would write it, cut short: a breach 10,000 levels down names its first steps. */
function pathText(path: (string | number)[]): string {
  const shown = path.slice(0, 12);
  let text = '';
  for (const step of shown) {
    if (typeof step === 'number') text += `[${step}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(step)) text += text === '' ? step : `.${step}`;
    else text += `[${JSON.stringify(step.length > 40 ? `${step.slice(0, 40)}...` : step)}]`;
  }
  return path.length > shown.length ? `${text}...` : text;
}
