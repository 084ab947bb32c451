/**
 * Turns the first zod issue of a refused body into a 400 that names the parameter (`messages[2].role`)
 * and says what to fix, with OpenAI-style codes. Parse with `safeParseReporting` so that a missing
 * field can be told from a field of the wrong type.
 */
import type { z } from 'zod';
import { GatewayError } from './errors.js';

type Issue = z.core.$ZodIssue;

/**
 * `schema.safeParse(body)`, with each issue's input reported (what `validationError` needs to tell a missing
 * field from one of the wrong type) only when there is an issue: with `reportInput`, zod 4's parse of a chat
 * request took two to three times as long, though its compiled path for objects runs either way
 * (docs/performance.md, fifteenth session). Whether a body passes does not depend on it, so a refused body is
 * parsed twice.
 */
export function safeParseReporting<T extends z.ZodType>(schema: T, body: unknown): z.ZodSafeParseResult<z.output<T>> {
  const result = schema.safeParse(body);
  return result.success ? result : schema.safeParse(body, { reportInput: true });
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

interface Described {
  message: string;
  param: string | null;
  code: string;
}

function describe(issue: Issue, base: readonly PropertyKey[], unsupported: Readonly<Record<string, string>>): Described {
  const path = [...base, ...issue.path];
  const param = path.length > 0 ? formatPath(path) : null;
  const at = param ?? 'body';
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0] ?? '';
      const full = param ? `${param}.${key}` : key;
      if (param === null && key in unsupported) {
        return { message: `Unsupported parameter '${key}': ${unsupported[key]}.`, param: key, code: 'unsupported_parameter' };
      }
      return { message: `Unrecognized request argument supplied: '${full}'.`, param: full, code: 'unrecognized_argument' };
    }
    case 'invalid_union': {
      if (issue.discriminator !== undefined) {
        // The path already ends at the discriminator; `input` is the object that carries it.
        const value = (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator];
        const options = 'options' in issue && issue.options ? issue.options.map(String).join(', ') : '';
        if (value === undefined) return { message: `Missing required parameter: '${at}'.`, param, code: 'missing_required_parameter' };
        if (typeof value !== 'string') {
          return { message: `Invalid type for '${at}': expected a string (one of ${options}), got ${typeName(value)}.`, param, code: 'invalid_type' };
        }
        return { message: `Invalid value for '${at}': '${value}' is not one of ${options}.`, param, code: 'invalid_value' };
      }
      // A plain union: report the branch that got furthest into the value (deeper, or past the type check).
      let best: Issue | null = null;
      let bestScore = 0;
      for (const branch of issue.errors) {
        const first = branch[0];
        const score = first ? first.path.length * 2 + (first.code === 'invalid_type' ? 0 : 1) : 0;
        if (first && score > bestScore) [best, bestScore] = [first, score];
      }
      if (best) return describe(best, path, unsupported);
      if (issue.input === undefined) return { message: `Missing required parameter: '${at}'.`, param, code: 'missing_required_parameter' };
      const expected = issue.errors
        .map((b) => b[0])
        .filter((i): i is Issue & { expected: string } => i?.code === 'invalid_type')
        .map((i) => i.expected);
      return {
        message: `Invalid type for '${at}': expected ${expected.length ? expected.join(' or ') : 'another type'}, got ${typeName(issue.input)}.`,
        param,
        code: 'invalid_type',
      };
    }
    case 'invalid_type':
      if (issue.input === undefined) return { message: `Missing required parameter: '${at}'.`, param, code: 'missing_required_parameter' };
      if (issue.expected === 'int') {
        return { message: `Invalid value for '${at}': expected an integer, got ${String(issue.input)}.`, param, code: 'invalid_value' };
      }
      return { message: `Invalid type for '${at}': expected ${issue.expected}, got ${typeName(issue.input)}.`, param, code: 'invalid_type' };
    default:
      return { message: `Invalid value for '${at}': ${issue.message}.`, param, code: 'invalid_value' };
  }
}

/** `base`: where in the body the validated value sits, when it is not the whole body. */
export function validationError(error: z.ZodError, unsupported: Readonly<Record<string, string>> = {}, base: readonly PropertyKey[] = []): GatewayError {
  const first = error.issues[0];
  if (!first) return new GatewayError(400, 'invalid_request_error', 'invalid_value', 'Invalid request body.');
  const d = describe(first, base, unsupported);
  return new GatewayError(400, 'invalid_request_error', d.code, d.message, d.param);
}
