/**
 * A small parser of the Prometheus text exposition format (version 0.0.4, what prom-client writes), for tests
 * that scrape GET /metrics: samples keyed by metric name and sorted labels, so two scrapes can be compared.
 * prom-client itself has no parser.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  /** `name{a="1",b="2"}` (labels sorted by name) -> value. */
  values: Map<string, number>;
  samples: Sample[];
  /** `# TYPE` lines: metric family name -> counter, gauge, histogram, summary, untyped. */
  types: Map<string, string>;
}

/** The key of a sample: its name and its labels sorted by name, as written by the exposition format. */
export function seriesKey(name: string, labels: Record<string, string> = {}): string {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return name;
  return `${name}{${entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}

function parseValue(text: string): number {
  // Prometheus reads values with Go's ParseFloat (case-insensitive Inf and NaN); prom-client writes `Nan`.
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return NaN;
  const n = Number(text);
  if (text === '' || Number.isNaN(n)) throw new Error(`not a sample value: ${JSON.stringify(text)}`);
  return n;
}

/** Parses `{a="x",b="y\"z"}` starting at `line[start] === '{'`; returns the labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  const fail = (why: string): never => {
    throw new Error(`bad labels (${why}) at ${i} in: ${line}`);
  };
  for (;;) {
    while (line[i] === ' ' || line[i] === ',') i++;
    if (line[i] === '}') return { labels, end: i + 1 };
    const nameMatch = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!nameMatch) fail('label name');
    const name = (nameMatch as RegExpExecArray)[0];
    i += name.length;
    if (line[i] !== '=' || line[i + 1] !== '"') fail('expected ="');
    i += 2;
    let value = '';
    for (;;) {
      const ch = line[i];
      if (ch === undefined) fail('unterminated value');
      if (ch === '"') break;
      if (ch === '\\') {
        const next = line[i + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else fail('bad escape');
        i += 2;
        continue;
      }
      value += ch;
      i++;
    }
    i++;
    if (name in labels) fail(`duplicate label ${name}`);
    labels[name] = value;
  }
}

export function parsePrometheusText(text: string): Scrape {
  const values = new Map<string, number>();
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^#\s+TYPE\s+(\S+)\s+(\S+)$/.exec(line);
      if (type) types.set(type[1] as string, type[2] as string);
      continue;
    }
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) throw new Error(`not a sample line: ${line}`);
    const name = nameMatch[0];
    let labels: Record<string, string> = {};
    let rest = line.slice(name.length);
    if (rest.startsWith('{')) {
      const parsed = parseLabels(line, name.length);
      labels = parsed.labels;
      rest = line.slice(parsed.end);
    }
    const fields = rest.trim().split(/\s+/);
    if (fields.length < 1 || fields.length > 2) throw new Error(`bad sample: ${line}`);
    const value = parseValue(fields[0] as string);
    const key = seriesKey(name, labels);
    if (values.has(key)) throw new Error(`duplicate series ${key}`);
    values.set(key, value);
    samples.push({ name, labels, value });
  }
  return { values, samples, types };
}

/** A series' value (0 when absent: a counter not incremented yet has no series). */
export function valueOf(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  return scrape.values.get(seriesKey(name, labels)) ?? 0;
}

/**
 * The series of `name` whose value changed between two scrapes, key -> after - before (a series absent
 * before counts from 0). Keys are `seriesKey` keys.
 */
export function deltas(before: Scrape, after: Scrape, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of after.samples) {
    if (s.name !== name) continue;
    const key = seriesKey(s.name, s.labels);
    const d = s.value - (before.values.get(key) ?? 0);
    if (d !== 0) out[key] = d;
  }
  for (const s of before.samples) {
    if (s.name !== name) continue;
    const key = seriesKey(s.name, s.labels);
    if (!after.values.has(key)) out[key] = -s.value;
  }
  return out;
}

/** `deltas` as an object keyed by seriesKey, built from label sets (for toEqual against `deltas`). */
export function expectedDeltas(name: string, rows: [Record<string, string>, number][]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [labels, d] of rows) out[seriesKey(name, labels)] = d;
  return out;
}
