/**
 * Issue 16, "drop-in for the clients people use": every parameter of OpenAI's chat-completions API, as the
 * installed openai-node SDK types it, is either accepted by the gateway's validator or refused as docs/api.md
 * documents.
 *
 * The SDK's `ChatCompletionCreateParamsBase` is read at test time with the TypeScript compiler API, and its
 * types are walked: every top-level parameter, every value of a literal union (`reasoning_effort`,
 * `service_tier`, booleans), every member of a tagged union (message roles, content-part, tool, tool-call and
 * tool-choice types, response formats), every field of the objects inside, and every explicit `null` the types
 * allow must have a sample below whose outcome is asserted. A field, value or variant a new SDK release adds
 * therefore fails "every ... has a sample" until someone decides what the gateway does with it and writes it
 * down here (and, for a refusal, in docs/api.md).
 *
 * Refusals: the top-level parameters docs/api.md lists after "Refused with 400 `unsupported_parameter`" are
 * read from the doc; each must be refused with that code and `param` naming it, and a parameter with no
 * accepted value must be in that list. The refusals the same sentence names inside a parameter (custom tools
 * and tool calls, `role: "function"`, an assistant's stored `audio: {id}` or `function_call`) are samples too,
 * with the `param` naming the part, as the doc says.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseChatRequest } from '../../src/openai/chat-request.js';
import { GatewayError } from '../../src/openai/errors.js';

type Json = Record<string, unknown>;

const SDK_FILE = fileURLToPath(new URL('../../node_modules/openai/resources/chat/completions/completions.d.ts', import.meta.url));
const API_DOC = fileURLToPath(new URL('../../docs/api.md', import.meta.url));
const PARAMS_INTERFACE = 'ChatCompletionCreateParamsBase';

// ---------------------------------------------------------------------------------------------------------
// The SDK's types

const program = ts.createProgram([SDK_FILE], {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  types: [],
});
const checker = program.getTypeChecker();

function paramsType(): ts.Type {
  const source = program.getSourceFile(SDK_FILE);
  if (!source) throw new Error(`cannot read ${SDK_FILE}`);
  let found: ts.InterfaceDeclaration | undefined;
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === PARAMS_INTERFACE) found = node;
  });
  if (!found) throw new Error(`no interface ${PARAMS_INTERFACE} in ${SDK_FILE}`);
  return checker.getTypeAtLocation(found.name);
}

const PARAMS = paramsType();
const SDK_PARAMS = new Map(PARAMS.getProperties().map((p) => [p.name, checker.getTypeOfSymbol(p)] as const));

const EMPTY = ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void;
const LITERAL = ts.TypeFlags.StringLiteral | ts.TypeFlags.NumberLiteral | ts.TypeFlags.BooleanLiteral;

const membersOf = (type: ts.Type): readonly ts.Type[] => (type.isUnion() ? type.types : [type]);
const allowsNull = (type: ts.Type): boolean => membersOf(type).some((t) => (t.flags & ts.TypeFlags.Null) !== 0);
/** `string`, or `string & {}` (the SDK's "any string, these suggested"). */
const isOpenString = (t: ts.Type): boolean =>
  (t.flags & ts.TypeFlags.String) !== 0 || (t.isIntersection() && t.types.some((m) => (m.flags & ts.TypeFlags.String) !== 0));

function literalValue(t: ts.Type): unknown {
  if (t.isStringLiteral() || t.isNumberLiteral()) return t.value;
  return checker.typeToString(t) === 'true';
}

function literalOf(obj: ts.Type, prop: string): unknown {
  const symbol = obj.getProperty(prop);
  if (!symbol) return undefined;
  const t = checker.getNonNullableType(checker.getTypeOfSymbol(symbol));
  return (t.flags & LITERAL) !== 0 ? literalValue(t) : undefined;
}

/** A value the samples put at one place in the SDK's type, and whether the sample it came from is accepted. */
interface Seen {
  value: unknown;
  accepted: boolean;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown): string => JSON.stringify(v);

/**
 * What of `type` no sample covers, as paths: a literal no sample uses (`.reasoning_effort="max"`), a union
 * member no sample has (`.tools[]<type=custom>`), a field no sample sets (`.stream_options.include_usage`), a
 * `null` the type allows and no sample sends. A refused sample covers what it holds, but only accepted samples
 * are looked into: inside a variant whose every sample is refused, nothing more is asked.
 */
function uncovered(type: ts.Type, seen: Seen[], path: string, depth = 0): string[] {
  if (depth > 8) return [];
  const out: string[] = [];
  const members = membersOf(type);
  if (allowsNull(type) && !seen.some((s) => s.value === null)) out.push(`${path}=null`);
  const present = members.filter((t) => (t.flags & EMPTY) === 0);
  const open = present.some(isOpenString);
  const objects: ts.Type[] = [];
  for (const t of present) {
    if ((t.flags & LITERAL) !== 0) {
      const v = literalValue(t);
      if (!(open && typeof v === 'string') && !seen.some((s) => s.value === v)) out.push(`${path}=${show(v)}`);
    } else if (isOpenString(t)) {
      if (!seen.some((s) => typeof s.value === 'string')) out.push(`${path}<string>`);
    } else if ((t.flags & ts.TypeFlags.NumberLike) !== 0) {
      if (!seen.some((s) => typeof s.value === 'number')) out.push(`${path}<number>`);
    } else if (checker.isArrayType(t)) {
      const arrays = seen.filter((s) => Array.isArray(s.value));
      if (arrays.length === 0) {
        out.push(`${path}<array>`);
        continue;
      }
      const element = checker.getTypeArguments(t as ts.TypeReference)[0];
      const elements = arrays.flatMap((s) => (s.value as unknown[]).map((value) => ({ value, accepted: s.accepted })));
      if (element) out.push(...uncovered(element, elements, `${path}[]`, depth + 1));
    } else if ((t.flags & ts.TypeFlags.Object) !== 0) {
      objects.push(t);
    }
  }
  if (objects.length === 1) {
    out.push(...uncoveredObject(objects[0] as ts.Type, seen.filter((s) => isObject(s.value)), path, depth));
  } else if (objects.length > 1) {
    // A tagged union: the member is told by the literal its `type` (or a message's `role`) holds.
    const tag = ['type', 'role'].find((p) => objects.every((o) => literalOf(o, p) !== undefined));
    if (!tag) throw new Error(`${path}: a union of objects with no tag; teach the walker how to tell them apart`);
    for (const o of objects) {
      const value = literalOf(o, tag);
      const mine = seen.filter((s) => isObject(s.value) && s.value[tag] === value);
      if (mine.length === 0) out.push(`${path}<${tag}=${show(value)}>`);
      else out.push(...uncoveredObject(o, mine, `${path}<${tag}=${show(value)}>`, depth));
    }
  }
  return out;
}

function uncoveredObject(type: ts.Type, seen: Seen[], path: string, depth: number): string[] {
  if (type.getCallSignatures().length > 0) return [];
  // Covered by refusal: nothing inside a variant only refused samples hold needs a sample of its own.
  if (!seen.some((s) => s.accepted)) return [];
  const out: string[] = [];
  for (const prop of type.getProperties()) {
    const values = seen.filter((s) => isObject(s.value) && prop.name in s.value).map((s) => ({ value: (s.value as Json)[prop.name], accepted: s.accepted }));
    if (values.length === 0) {
      out.push(`${path}.${prop.name}`);
      continue;
    }
    out.push(...uncovered(checker.getTypeOfSymbol(prop), values, `${path}.${prop.name}`, depth + 1));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// What docs/api.md refuses

/**
 * The top-level parameters docs/api.md lists as refused with 400 `unsupported_parameter`: in the sentence
 * "Refused with 400 `unsupported_parameter`: `n` > 1, `functions` / `function_call` (use `tools`), ...", each
 * item that opens with a parameter's name. Items about a part of a parameter ("custom tool calls", "an
 * assistant message's stored `audio: {id}`") open otherwise, and are left to the samples.
 */
function documentedRefusals(): Set<string> {
  const doc = readFileSync(API_DOC, 'utf8');
  const sentence = /Refused\s+with\s+400\s+`unsupported_parameter`:([\s\S]*?)\.\s+[A-Z]/.exec(doc)?.[1];
  if (sentence === undefined) throw new Error('docs/api.md: no "Refused with 400 `unsupported_parameter`: ..." sentence');
  // "(use `tools`)" is advice, not a refusal.
  const items = sentence
    .replace(/\([^)]*\)/g, '')
    .split(/,|\s\/\s|\band\b/)
    .map((item) => item.replace(/\s+/g, ' ').trim());
  return new Set(items.flatMap((item) => /^`([a-z_]+)`/.exec(item)?.[1] ?? []));
}

const DOC_REFUSED = documentedRefusals();

// ---------------------------------------------------------------------------------------------------------
// The samples

interface Sample {
  /** The top-level parameter the sample is for. */
  param: string;
  value: unknown;
  /** Other parameters the sample needs (`stream: true` beside `stream_options` ...). */
  with?: Json;
  /** Absent: accepted. Else the 400 it gets (`unsupported_parameter` or `unsupported_value`), its `param` naming the part. */
  refused?: { code: string; param: string };
}

const USER = { role: 'user', content: 'What is the weather in Paris?' };
const FN_TOOL = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const WITH_TOOLS = { tools: [FN_TOOL] };
const CALL = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
const PNG = 'data:image/png;base64,iVBORw0KGgo=';
const BREAKPOINT = { prompt_cache_breakpoint: { mode: 'explicit' } };

const accept = (param: string, values: unknown[], extra: Omit<Sample, 'param' | 'value'> = {}): Sample[] =>
  values.map((value) => ({ param, value, ...extra }));
/** Refused with 400 `unsupported_parameter`, its `param` naming `part` (docs/api.md: "The error's `param` names the part"). */
const refuse = (param: string, values: unknown[], part = param, extra: Omit<Sample, 'param' | 'value' | 'refused'> = {}): Sample[] =>
  values.map((value) => ({ param, value, refused: { code: 'unsupported_parameter', param: part }, ...extra }));
/** Refused with 400 `unsupported_value`: the parameter is served, this value of it is not. */
const refuseValue = (param: string, values: unknown[]): Sample[] =>
  values.map((value) => ({ param, value, refused: { code: 'unsupported_value', param } }));
/** A conversation: the sample messages after a user turn. */
const turns = (...messages: Json[]): Json[] => [USER, ...messages];
const toolTurn = (tool: Json): Json[] => turns({ role: 'assistant', content: null, tool_calls: [CALL] }, tool);

const SAMPLES: Sample[] = [
  // --- messages, one role at a time -------------------------------------------------------------------
  ...accept('messages', [
    turns(),
    [{ role: 'system', content: 'Be brief.', name: 'ops' }, USER],
    [{ role: 'system', content: [{ type: 'text', text: 'Be brief.', ...BREAKPOINT }] }, USER],
    [{ role: 'developer', content: 'Be brief.', name: 'ops' }, USER],
    [{ role: 'developer', content: [{ type: 'text', text: 'Be brief.', ...BREAKPOINT }] }, USER],
    [{ role: 'user', name: 'ada', content: [{ type: 'text', text: 'Describe these.', ...BREAKPOINT }] }],
    [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG, detail: 'auto' }, ...BREAKPOINT }] }],
    [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG, detail: 'low' } }] }],
    [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG, detail: 'high' } }] }],
    [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' }, ...BREAKPOINT }] }],
    [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'SUQz', format: 'mp3' } }] }],
    [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' }, ...BREAKPOINT }] }],
    [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc123' } }] }],
    // Assistant turns as clients echo them back: OpenAI's explicit nulls and empty lists (issue 16).
    turns({ role: 'assistant', content: 'Sunny.', name: 'bot', refusal: null, audio: null, function_call: null, tool_calls: null }, USER),
    turns({ role: 'assistant', content: 'Sunny.', tool_calls: [] }, USER),
    turns({ role: 'assistant', content: [{ type: 'text', text: 'Sunny.', ...BREAKPOINT }, { type: 'refusal', refusal: 'No.' }], refusal: 'No.' }, USER),
    toolTurn({ role: 'tool', tool_call_id: 'call_1', content: '18C' }),
    toolTurn({ role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '18C', ...BREAKPOINT }] }),
    // Not OpenAI's field, but OpenAI ignores it and LangChain JS sends it.
    toolTurn({ role: 'tool', tool_call_id: 'call_1', content: '18C', name: 'get_weather' }),
  ]),
  // What no target can serve: the deprecated function calling in history, audio kept in OpenAI's storage,
  // custom (free-form) tool calls.
  ...refuse('messages', [turns({ role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{}' } })], 'messages[1].function_call'),
  ...refuse('messages', [turns({ role: 'assistant', content: null, tool_calls: [CALL] }, { role: 'function', name: 'get_weather', content: '18C' })], 'messages[2].role'),
  ...refuse('messages', [turns({ role: 'assistant', content: 'Listen.', audio: { id: 'audio_abc123' } }, USER)], 'messages[1].audio'),
  ...refuse(
    'messages',
    [turns({ role: 'assistant', content: null, tool_calls: [CALL, { id: 'call_2', type: 'custom', custom: { name: 'run_sql', input: 'SELECT 1' } }] })],
    'messages[1].tool_calls[1]',
  ),

  ...accept('model', ['svc-fast']),

  // --- sampling and output ----------------------------------------------------------------------------
  ...accept('temperature', [0, 0.7, 2]),
  ...accept('top_p', [0.5]),
  ...accept('max_tokens', [100]),
  ...accept('max_completion_tokens', [100]),
  ...accept('frequency_penalty', [0.5]),
  ...accept('presence_penalty', [-0.5]),
  ...accept('seed', [42]),
  ...accept('logit_bias', [{ '50256': -100 }, {}]),
  ...accept('logprobs', [true, false]),
  ...accept('top_logprobs', [5], { with: { logprobs: true } }),
  ...accept('stop', ['END', [], ['a', 'b', 'c', 'd', 'e', 'f']]),
  ...accept('stream', [true, false]),
  ...accept('stream_options', [{ include_usage: true, include_obfuscation: false }, { include_usage: false, include_obfuscation: true }], { with: { stream: true } }),
  ...accept('n', [1]),
  // A value the gateway does not serve of a parameter it takes: `unsupported_value` (docs/api.md).
  ...refuseValue('n', [2]),
  ...accept('modalities', [['text']]),
  ...refuseValue('modalities', [['text', 'audio']]),
  ...accept('reasoning_effort', ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']),
  ...accept('verbosity', ['low', 'medium', 'high']),
  ...accept('user', ['user-1234']),
  ...accept('response_format', [
    { type: 'text' },
    { type: 'json_object' },
    { type: 'json_schema', json_schema: { name: 'weather', description: 'A forecast', schema: { type: 'object' }, strict: true } },
    { type: 'json_schema', json_schema: { name: 'weather', strict: false } },
    { type: 'json_schema', json_schema: { name: 'weather', strict: null } },
  ]),

  // --- tools ------------------------------------------------------------------------------------------
  ...accept('tools', [
    [FN_TOOL],
    [{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: {}, strict: true } }],
    [{ type: 'function', function: { name: 'get_weather', strict: false } }],
    [{ type: 'function', function: { name: 'get_weather', strict: null } }],
  ]),
  ...refuse('tools', [[FN_TOOL, { type: 'custom', custom: { name: 'run_sql', description: 'SQL', format: { type: 'text' } } }]], 'tools[1]'),
  ...accept('tool_choice', ['none', 'auto', 'required', { type: 'function', function: { name: 'get_weather' } }], { with: WITH_TOOLS }),
  ...accept(
    'tool_choice',
    [
      { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_weather' } }] } },
      { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] } },
    ],
    { with: WITH_TOOLS },
  ),
  ...refuse('tool_choice', [{ type: 'custom', custom: { name: 'run_sql' } }], 'tool_choice', { with: WITH_TOOLS }),
  ...accept('parallel_tool_calls', [true, false], { with: WITH_TOOLS }),

  // --- OpenAI platform options -------------------------------------------------------------------------
  ...accept('store', [true, false]),
  ...accept('metadata', [{ project: 'atlas' }], { with: { store: true } }),
  ...accept('service_tier', ['auto', 'default', 'flex', 'scale', 'priority']),
  ...accept('prompt_cache_key', ['tenant-42']),
  ...accept('prompt_cache_retention', ['in_memory', '24h']),
  ...accept('prompt_cache_options', [{ mode: 'implicit', ttl: '30m' }, { mode: 'explicit' }]),
  ...accept('safety_identifier', ['hashed-user-1']),

  // --- docs/api.md's refusals ---------------------------------------------------------------------------
  ...refuse('functions', [[{ name: 'get_weather', parameters: { type: 'object' } }]]),
  ...refuse('function_call', ['none', 'auto', { name: 'get_weather' }]),
  ...accept('audio', [null]),
  ...refuse('audio', [{ format: 'mp3', voice: 'alloy' }]),
  ...accept('prediction', [null]),
  ...refuse('prediction', [{ type: 'content', content: 'const x = 1;' }]),
  ...accept('moderation', [null]),
  ...refuse('moderation', [
    { input: { model: 'omni-moderation-latest', results: [] }, output: { model: 'omni-moderation-latest', results: [] } },
  ]),
  ...refuse('web_search_options', [{}, { search_context_size: 'low' }]),
];

/** The explicit null of every top-level parameter whose SDK type allows one (docs/api.md: "with the explicit `null`s its types allow"). */
const NULLS: Sample[] = [...SDK_PARAMS]
  .filter(([name, type]) => allowsNull(type) && !SAMPLES.some((s) => s.param === name && s.value === null))
  .map(([param]) => ({ param, value: null }));

const ALL = [...SAMPLES, ...NULLS];

const BASE: Json = { model: 'svc-fast', messages: [USER] };
const bodyOf = (s: Sample): Json => ({ ...BASE, ...s.with, [s.param]: s.value });

function outcome(s: Sample): { ok: true } | { ok: false; status: number; code: string; param: string | null; message: string } {
  try {
    parseChatRequest(bodyOf(s));
    return { ok: true };
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { ok: false, status: err.status, code: err.code, param: err.param, message: err.message };
  }
}

const label = (s: Sample): string => {
  const text = JSON.stringify(s.value);
  return `${s.param}: ${text.length > 120 ? `${text.slice(0, 117)}...` : text}`;
};

// ---------------------------------------------------------------------------------------------------------
// The tests

describe('openai-node ChatCompletionCreateParams coverage', () => {
  it(`reads ${PARAMS_INTERFACE} from the installed SDK`, () => {
    // A guard on the reading itself: a parse that found nothing would make every coverage test pass.
    expect(SDK_PARAMS.size).toBeGreaterThan(30);
    expect([...SDK_PARAMS.keys()]).toEqual(expect.arrayContaining(['model', 'messages', 'tools', 'reasoning_effort']));
  });

  it('every SDK parameter has a sample', () => {
    // The generated nulls do not count: each parameter needs a value someone chose.
    const missing = [...SDK_PARAMS.keys()].filter((name) => !SAMPLES.some((s) => s.param === name));
    expect(missing, 'SDK parameters no sample covers: decide whether the gateway accepts or refuses each').toEqual([]);
  });

  it('every sample is an SDK parameter', () => {
    expect([...new Set(SAMPLES.map((s) => s.param))].filter((p) => !SDK_PARAMS.has(p))).toEqual([]);
  });

  it('a parameter with no accepted value is one docs/api.md lists as refused', () => {
    const neverAccepted = [...SDK_PARAMS.keys()].filter((name) => !ALL.some((s) => s.param === name && s.refused === undefined));
    expect(neverAccepted.filter((name) => !DOC_REFUSED.has(name))).toEqual([]);
  });

  it("docs/api.md's refusal list names SDK parameters, each with a refused sample", () => {
    expect(DOC_REFUSED.size).toBeGreaterThan(0);
    expect([...DOC_REFUSED].filter((name) => !SDK_PARAMS.has(name)), 'listed in docs/api.md but not an SDK parameter').toEqual([]);
    expect(
      [...DOC_REFUSED].filter((name) => !SAMPLES.some((s) => s.param === name && s.refused?.code === 'unsupported_parameter')),
      'documented as refused but no sample checks it',
    ).toEqual([]);
  });

  it('every value, variant, field and null the SDK types name has a sample', () => {
    const missing: string[] = [];
    for (const [name, type] of SDK_PARAMS) {
      const seen = ALL.filter((s) => s.param === name).map((s) => ({ value: s.value, accepted: s.refused === undefined }));
      missing.push(...uncovered(type, seen, name));
    }
    expect(missing, 'parts of the SDK types no sample covers').toEqual([]);
  });

  it.each(ALL.filter((s) => s.refused === undefined).map((s) => [label(s), s] as const))('accepts %s', (_label, s) => {
    const got = outcome(s);
    expect(got, JSON.stringify(got)).toEqual({ ok: true });
  });

  it.each(ALL.filter((s) => s.refused !== undefined).map((s) => [label(s), s] as const))('refuses %s', (_label, s) => {
    const got = outcome(s);
    const want = s.refused as { code: string; param: string };
    expect(got.ok ? got : { status: got.status, code: got.code, param: got.param }, JSON.stringify(got)).toEqual({ status: 400, ...want });
  });
});
