/**
 * What a recording upstream answers, decided from the request alone, the same way for every provider, so a
 * client test can predict the answer exactly:
 *
 * - the conversation ends with tool results: a text that quotes them (`<name> says: <result>`);
 * - tools are offered (and not switched off) after a user turn: a call of the forced tool, else the first,
 *   with arguments built from its parameter schema;
 * - a JSON schema is asked for: a JSON text that satisfies it;
 * - otherwise: a text echoing the last user turn.
 *
 * Strings in built values are the last capitalised word of the last user turn ("weather in Paris?" ->
 * "Paris"), so a test can choose them through its prompt.
 */

export type JsonSchema = Record<string, unknown>;

export interface ToolOffer {
  name: string;
  parameters: JsonSchema | null;
}

export interface ToolResult {
  name: string;
  content: string;
}

export interface PlanInput {
  /** Text of the last user turn (tool results excluded). */
  userText: string;
  /** Set when the conversation ends with tool results rather than a user's words. */
  toolResults: ToolResult[] | null;
  tools: ToolOffer[];
  /** A tool the request forces; null for the model's choice. */
  forcedTool: string | null;
  /** tool_choice none / mode NONE. */
  toolsOff: boolean;
  jsonSchema: JsonSchema | null;
}

export type Plan = { kind: 'text'; text: string } | { kind: 'tool'; name: string; args: Record<string, unknown> };

export function planAnswer(input: PlanInput): Plan {
  if (input.toolResults !== null && input.toolResults.length > 0) {
    return { kind: 'text', text: input.toolResults.map((r) => `${r.name} says: ${r.content}`).join(' ') };
  }
  if (input.tools.length > 0 && !input.toolsOff) {
    const tool = input.tools.find((t) => t.name === input.forcedTool) ?? input.tools[0];
    if (tool !== undefined) {
      const word = keyword(input.userText);
      const args = tool.parameters ? exampleOf(tool.parameters, tool.parameters, word) : {};
      return { kind: 'tool', name: tool.name, args: isRecord(args) ? args : {} };
    }
  }
  if (input.jsonSchema !== null) {
    return { kind: 'text', text: JSON.stringify(exampleOf(input.jsonSchema, input.jsonSchema, keyword(input.userText))) };
  }
  return { kind: 'text', text: `You said: ${input.userText.trim()}` };
}

/** The text the recording upstreams think aloud when asked to reason. */
export function thinkingText(userText: string): string {
  return `The user asks: ${userText.trim()} I should answer briefly.`;
}

/** The last word starting with a capital letter, without punctuation; `example` when there is none. */
export function keyword(text: string): string {
  const words = text.match(/\p{Lu}[\p{L}\p{N}_-]*/gu) ?? [];
  return words.at(-1) ?? 'example';
}

/** Pieces a text streams in: words with their trailing space. */
export function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [''];
}

/** A value satisfying `schema`; `root` resolves local `$ref`s, `word` fills strings. */
export function exampleOf(schema: unknown, root: unknown, word: string): unknown {
  if (!isRecord(schema)) return word;
  if (typeof schema.$ref === 'string') return exampleOf(resolveRef(schema.$ref, root), root, word);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((o) => !(isRecord(o) && o.type === 'null')) ?? options[0];
      return exampleOf(chosen, root, word);
    }
  }
  switch (typeOf(schema)) {
    case 'object': {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, exampleOf(v, root, word)]));
    }
    case 'array': {
      const count = Math.max(1, typeof schema.minItems === 'number' ? schema.minItems : 1);
      return Array.from({ length: count }, () => exampleOf(schema.items, root, word));
    }
    case 'integer':
      return clamp(3, schema);
    case 'number':
      return clamp(21.5, schema);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return stringFor(schema, word);
  }
}

function typeOf(schema: Record<string, unknown>): string {
  const t = schema.type;
  // Gemini's OpenAPI subset writes types upper-case; a nullable type is a list with "null".
  const name = Array.isArray(t) ? (t.find((x) => x !== 'null') ?? 'null') : t;
  if (typeof name === 'string') return name.toLowerCase();
  if (isRecord(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return 'string';
}

function stringFor(schema: Record<string, unknown>, word: string): string {
  if (schema.format === 'date') return '2026-01-02';
  if (schema.format === 'date-time') return '2026-01-02T03:04:05Z';
  if (schema.format === 'email') return 'someone@example.com';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  return word.padEnd(min, '.');
}

function clamp(value: number, schema: Record<string, unknown>): number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
  const max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  return Math.min(Math.max(value, min), max);
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return {};
  let node: unknown = root;
  for (const segment of ref.slice(1).split('/').filter((s) => s.length > 0)) {
    node = isRecord(node) ? node[decodeURIComponent(segment.replace(/~1/g, '/').replace(/~0/g, '~'))] : undefined;
  }
  return node ?? {};
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
