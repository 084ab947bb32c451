/**
 * Hostile JSON for fuzz tests: a document tree that can say what JSON.stringify cannot (duplicate keys,
 * number literals that parse to Infinity or lose precision, lone surrogates, nesting thousands deep), and
 * fast-check arbitraries that mutate a valid request body into such documents. Mutations are data (an
 * operation, a node index, a payload), so a failing case shrinks to the one mutation that matters.
 */
import fc from 'fast-check';

export type Doc =
  | { kind: 'value'; value: string | number | boolean | null }
  /** Emitted verbatim: number literals, escapes and framing that a JS value cannot hold. */
  | { kind: 'raw'; text: string }
  | { kind: 'array'; items: Doc[] }
  /** Entries, not a map: a key may appear twice. */
  | { kind: 'object'; entries: [string, Doc][] };

export function toDoc(value: unknown): Doc {
  if (Array.isArray(value)) return { kind: 'array', items: value.map(toDoc) };
  if (value !== null && typeof value === 'object') {
    return { kind: 'object', entries: Object.entries(value).map(([k, v]) => [k, toDoc(v)]) };
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) return { kind: 'value', value };
  return { kind: 'value', value: null };
}

export function render(doc: Doc): string {
  switch (doc.kind) {
    case 'value':
      return JSON.stringify(doc.value);
    case 'raw':
      return doc.text;
    case 'array':
      return `[${doc.items.map(render).join(',')}]`;
    case 'object':
      return `{${doc.entries.map(([k, v]) => `${JSON.stringify(k)}:${render(v)}`).join(',')}}`;
  }
}

/** Every node in document order, each with a setter that replaces it in its parent. */
interface Slot {
  node: Doc;
  replace(next: Doc): void;
}

function slots(root: { doc: Doc }): Slot[] {
  const out: Slot[] = [];
  const walk = (node: Doc, replace: (next: Doc) => void): void => {
    out.push({ node, replace });
    if (node.kind === 'array') node.items.forEach((item, i) => walk(item, (n) => (node.items[i] = n)));
    if (node.kind === 'object') node.entries.forEach((entry) => walk(entry[1], (n) => (entry[1] = n)));
  };
  walk(root.doc, (n) => (root.doc = n));
  return out;
}

const raw = (text: string): Doc => ({ kind: 'raw', text });

export type Mutation =
  | { op: 'replace'; at: number; with: Doc }
  | { op: 'delete'; at: number; entry: number }
  | { op: 'add'; at: number; key: string; with: Doc }
  | { op: 'duplicate'; at: number; entry: number; with: Doc }
  | { op: 'nest'; at: number; depth: number; asArray: boolean };

/**
 * Applies the mutations in order; each picks its node by index modulo the current node count. Payloads are
 * copied in: fast-check hands out the same instances again (constants, shrinking), and a shared node
 * mutated later would make a cycle.
 */
export function mutate(value: unknown, mutations: readonly Mutation[]): Doc {
  const root = { doc: toDoc(value) };
  for (const m of mutations) {
    const all = slots(root);
    const slot = all[m.at % all.length] as Slot;
    const node = slot.node;
    switch (m.op) {
      case 'replace':
        slot.replace(structuredClone(m.with));
        break;
      case 'delete':
        if (node.kind === 'object' && node.entries.length > 0) node.entries.splice(m.entry % node.entries.length, 1);
        if (node.kind === 'array' && node.items.length > 0) node.items.splice(m.entry % node.items.length, 1);
        break;
      case 'add':
        if (node.kind === 'object') node.entries.push([m.key, structuredClone(m.with)]);
        if (node.kind === 'array') node.items.push(structuredClone(m.with));
        break;
      case 'duplicate':
        if (node.kind === 'object' && node.entries.length > 0) {
          const [key] = node.entries[m.entry % node.entries.length] as [string, Doc];
          node.entries.push([key, structuredClone(m.with)]);
        }
        break;
      case 'nest': {
        // Raw text, not nested nodes, so later mutations need not walk (or recurse) 100,000 levels.
        const [open, close] = m.asArray ? ['[', ']'] : ['{"a":', '}'];
        slot.replace(raw(open.repeat(m.depth) + render(node) + close.repeat(m.depth)));
        break;
      }
    }
  }
  return root.doc;
}

/** Number literals at the edges of what JSON.parse and the validators agree on. */
export const edgeNumbers: fc.Arbitrary<Doc> = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '1e-400', '-0', '0.0', '9007199254740993', '-9007199254740993', '1e21', '18446744073709551616', '123456789012345678901234567890', '0.1e1', '1E2', '2.5').map(raw),
  fc.double().map((value) => ({ kind: 'value' as const, value })),
  fc.integer().map((value) => ({ kind: 'value' as const, value })),
  fc.constantFrom(0, -1, 1, 2, 4, 20, 64, 100, 128, 256, 65_536, 2 ** 31, 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER).map((value) => ({ kind: 'value' as const, value })),
);

/** Strings that have hurt parsers, loggers and databases. */
export const hostileStrings: fc.Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\u202e\u0645\u0631\u062d\u0628\u0627',
    '\ufeff',
    '\u{1f600}\u200d\u{1f525}',
    'e\u0301\u0301\u0301',
    "'; DROP TABLE api_keys; --",
    '${7*7}{{7*7}}',
    '__proto__',
    'svc-fast',
    'svc-auto\u0000',
    'SVC-FAST',
    ' svc-smart',
    'gpt-4o',
    '2026-01-01',
    'live',
    'test',
  ),
  fc.tuple(fc.constantFrom('a', '\u00e9', '\u{1f600}', '\u0000', 'word '), fc.integer({ min: 1_000, max: 200_000 })).map(([s, n]) => s.repeat(n)),
);

const stringDoc = hostileStrings.map((value): Doc => ({ kind: 'value', value }));
/** JSON string literals no JS string would render: lone surrogates, escaped NULs, overlong escapes. */
const rawStrings: fc.Arbitrary<Doc> = fc.constantFrom('"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"a\\u0000b"', '"\\/\\b\\f"').map(raw);

/** Any value a client could put where a valid one belonged. */
export const hostileValue: fc.Arbitrary<Doc> = fc.oneof(
  { arbitrary: fc.constantFrom<Doc>({ kind: 'value', value: null }, { kind: 'value', value: true }, { kind: 'value', value: false }), weight: 2 },
  { arbitrary: edgeNumbers, weight: 3 },
  { arbitrary: stringDoc, weight: 3 },
  { arbitrary: rawStrings, weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }).map(toDoc), weight: 2 },
  { arbitrary: fc.constantFrom<Doc>({ kind: 'array', items: [] }, { kind: 'object', entries: [] }), weight: 1 },
);

/** Keys a strict schema must refuse, and keys that name object internals. */
export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', ' model', 'MODEL', 'model\u0000', 'extra', 'functions', 'reasoning_effort', 'role', 'type'),
  fc.string({ maxLength: 20 }),
);

const at = fc.nat();
export const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('replace' as const), at, with: hostileValue }), weight: 5 },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), at, entry: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('add' as const), at, key: hostileKey, with: hostileValue }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant('duplicate' as const), at, entry: fc.nat(), with: hostileValue }), weight: 2 },
  {
    arbitrary: fc.record({
      op: fc.constant('nest' as const),
      at,
      depth: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.constantFrom(1_000, 10_000, 100_000)),
      asArray: fc.boolean(),
    }),
    weight: 1,
  },
);

/** A valid body mutated 0 to 4 times (0 keeps the valid path, and its billing, in the mix). */
export function mutatedBody(valid: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc
    .tuple(valid, fc.oneof({ arbitrary: fc.constant([] as Mutation[]), weight: 1 }, { arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 4 }), weight: 4 }))
    .map(([v, ms]) => render(mutate(v, ms)));
}

/** Whole bodies that are not a JSON object at all, or barely. */
export const brokenBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'null', '[]', '"x"', '42', '{', '{"model":', '{"a":1,}', "{'model':'svc-fast'}", '\u0000', '\ufeff{}', '{}', '{"__proto__":{"admin":true}}', '[{"model":"svc-fast"}]'),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
);
