/**
 * `svc-gateway usage export`, run as a real process (`bin/svc-gateway.js`, the built code: `npm run build`
 * first) against the SQLite file of a running gateway that served real completions: the rows are the
 * requests that were charged, their sums are what /v1/usage reports, in the documented columns, with RFC 4180
 * quoting of a routed model name that holds a comma and quotes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/config/schema.js';
import { createApiKey } from '../../src/keys/key-service.js';
import { type Seeded, type TestGateway, chat, startTestGateway } from '../helpers/gateway.js';

const ODD_MODEL = 'sandbox-fast, "v2"';
const COLUMNS =
  'event_id,request_id,time,account_id,environment,key_id,model,routed_provider,routed_model,prompt_tokens,' +
  'completion_tokens,cached_tokens,reasoning_tokens,credits,shortfall_credits,outcome,latency_ms';

const dir = mkdtempSync(join(tmpdir(), 'svc-usage-export-'));
const env = { ...process.env, SVC_DATABASE_URL: `sqlite:${join(dir, 'gateway.db')}` };

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/svc-gateway.js', ...args], { env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** RFC 4180 records (CRLF between them), quoted fields unquoted. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      let close = i + 1;
      // The closing quote is the first quote not doubled.
      for (;;) {
        const at = text.indexOf('"', close);
        if (at === -1) throw new Error('unterminated quote');
        if (text[at + 1] === '"') close = at + 2;
        else {
          close = at;
          break;
        }
      }
      field += text.slice(i + 1, close).replaceAll('""', '"');
      i = close + 1;
    } else if (text[i] === ',') {
      fields.push(field);
      field = '';
      i += 1;
    } else if (text.startsWith('\r\n', i)) {
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
      i += 2;
    } else field += text[i++];
  }
  expect(field === '' && fields.length === 0, 'the last record ends with CRLF').toBe(true);
  return records;
}

type Row = Record<string, string | number>;
/** What an answer says of its charge. */
type Svc = { credits_used: number; routed_model: string; tokens_metered: { prompt: number; completion: number } };

function csvRows(text: string): Row[] {
  const [header, ...records] = parseCsv(text);
  expect(header?.join(',')).toBe(COLUMNS);
  return records.map((fields) => {
    expect(fields).toHaveLength(17);
    const row: Row = {};
    header!.forEach((name, i) => {
      const v = fields[i]!;
      row[name] = /_tokens$|^credits$|^shortfall_credits$|^latency_ms$|^event_id$/.test(name) ? Number(v) : v;
    });
    return row;
  });
}

function sum(rows: Row[], column: string): number {
  return rows.reduce((total, row) => total + Number(row[column]), 0);
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
// Yesterday to tomorrow: the requests below are inside it even if the test runs across a UTC midnight.
const FROM = utcDay(Date.now() - 86_400_000);
const TO = utcDay(Date.now() + 86_400_000);

describe('svc-gateway usage export', () => {
  let gw: TestGateway;
  let owner: Seeded;
  let other: Seeded;
  let testSecret: string;
  /** x-request-id and svc of each live answer of `owner`. */
  const answers: { requestId: string; svc: Svc; model: string }[] = [];

  beforeAll(async () => {
    const config = structuredClone(DEFAULT_CONFIG) as {
      providers: { sandbox: { pace: unknown } };
      aliases: Record<string, { targets: { provider: string; model: string }[] }>;
    };
    config.providers.sandbox.pace = { time_to_first_token_ms: 0, tokens_per_second: 0 };
    config.aliases['svc-fast']!.targets[0]!.model = ODD_MODEL;
    gw = await startTestGateway({ config: parseConfig(config), databaseUrl: env.SVC_DATABASE_URL });
    owner = await gw.seed({ purchased: 1_000_000 });
    other = await gw.seed({ purchased: 1_000_000 });
    await gw.store.ledger.grant({
      accountId: owner.accountId,
      environment: 'test',
      kind: 'purchased',
      amount: 1_000_000,
      expiresAt: null,
      idempotencyKey: null,
    });
    testSecret = (
      await createApiKey(gw.store.keys, { accountId: owner.accountId, environment: 'test', name: 'test', dailyCreditLimit: null })
    ).secret;

    const ask = async (secret: string, model: string, content: string, stream = false) => {
      const res = await chat(gw, secret, { model, messages: [{ role: 'user', content }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) });
      expect(res.status).toBe(200);
      const text = await res.text();
      return { requestId: res.headers.get('x-request-id') ?? '', text };
    };
    for (const [model, content] of [
      ['svc-fast', 'Name three prime numbers.'],
      ['svc-smart', 'Explain keyset pagination in two sentences.'],
      ['svc-fast', 'Say hello.'],
      ['svc-code', 'Write a function that adds two numbers.'],
    ] as const) {
      const { requestId, text } = await ask(owner.secret, model, content);
      const body = JSON.parse(text) as { svc: Svc };
      answers.push({ requestId, svc: body.svc, model });
    }
    // A streamed answer: its svc comes on the last chunk with usage.
    const streamed = await ask(owner.secret, 'svc-fast', 'Count to five.', true);
    const frames = streamed.text
      .split('\n\n')
      .filter((block) => block.startsWith('data: {'))
      .map((block) => JSON.parse(block.slice(6)) as { svc?: Svc });
    const svc = frames.findLast((frame) => frame.svc)?.svc;
    expect(svc).toBeDefined();
    answers.push({ requestId: streamed.requestId, svc: svc!, model: 'svc-fast' });
    await ask(other.secret, 'svc-smart', 'Another account.');
    await ask(testSecret, 'svc-fast', 'A test-environment request.');
  });

  afterAll(async () => {
    await gw?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports one CSV row per charged request, matching the answers and /v1/usage', async () => {
    const r = cli('usage', 'export', '--from', FROM, '--to', TO, '--format', 'csv', '--account', owner.accountId, '--environment', 'live');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.startsWith(COLUMNS + '\r\n')).toBe(true);
    // The routed model's comma and quotes are quoted, the quotes doubled.
    expect(r.stdout).toContain(`,sandbox,"sandbox/sandbox-fast, ""v2""",`);
    const rows = csvRows(r.stdout);
    expect(rows).toHaveLength(answers.length);
    // In time order, each request once, with what its answer said.
    expect(rows.map((row) => row.request_id)).toEqual(answers.map((a) => a.requestId));
    for (const [i, row] of rows.entries()) {
      const answer = answers[i]!;
      expect(row).toMatchObject({
        account_id: owner.accountId,
        environment: 'live',
        key_id: owner.keyId,
        model: answer.model,
        routed_provider: 'sandbox',
        routed_model: answer.svc.routed_model,
        credits: answer.svc.credits_used,
        shortfall_credits: 0,
        outcome: 'completed',
      });
      expect(Date.parse(String(row.time))).toBeGreaterThan(Date.now() - 600_000);
      expect(String(row.time)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(row.prompt_tokens).toBe(answer.svc.tokens_metered.prompt);
      expect(row.completion_tokens).toBe(answer.svc.tokens_metered.completion);
      expect(row.completion_tokens).toBeGreaterThan(0);
    }
    expect(rows.filter((row) => row.model === 'svc-fast').map((row) => row.routed_model)).toEqual([
      `sandbox/${ODD_MODEL}`,
      `sandbox/${ODD_MODEL}`,
      `sandbox/${ODD_MODEL}`,
    ]);
    const times = rows.map((row) => Date.parse(String(row.time)));
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const usage = (await (
      await fetch(`${gw.url}/usage?start_date=${FROM}&end_date=${TO}`, { headers: { authorization: `Bearer ${owner.secret}` } })
    ).json()) as { total_requests: number; total_prompt_tokens: number; total_completion_tokens: number; total_credits_spent: number };
    expect({
      total_requests: rows.length,
      total_prompt_tokens: sum(rows, 'prompt_tokens'),
      total_completion_tokens: sum(rows, 'completion_tokens'),
      total_credits_spent: sum(rows, 'credits'),
    }).toEqual({
      total_requests: usage.total_requests,
      total_prompt_tokens: usage.total_prompt_tokens,
      total_completion_tokens: usage.total_completion_tokens,
      total_credits_spent: usage.total_credits_spent,
    });
    expect(usage.total_credits_spent).toBeGreaterThan(0);
  });

  it('writes the same rows as JSON Lines to --output, and a summary', () => {
    const file = join(dir, 'usage.jsonl');
    const r = cli('usage', 'export', '--from', FROM, '--to', TO, '--format', 'jsonl', '--account', owner.accountId, '--environment', 'live', '--output', file, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const rows = lines.map((line) => JSON.parse(line) as Row);
    const csv = csvRows(cli('usage', 'export', '--from', FROM, '--to', TO, '--format', 'csv', '--account', owner.accountId, '--environment', 'live').stdout);
    expect(rows).toEqual(csv);
    expect(Object.keys(rows[0]!).join(',')).toBe(COLUMNS);
    expect(JSON.parse(r.stdout)).toEqual({
      object: 'usage_export',
      file,
      format: 'jsonl',
      from: FROM,
      to: TO,
      account_id: owner.accountId,
      environment: 'live',
      events: answers.length,
      credits: sum(rows, 'credits'),
    });
    // Written beside FILE and renamed: no partial file is left behind.
    expect(readdirSync(dir).filter((name) => name.includes('.partial-'))).toEqual([]);
    const human = cli('usage', 'export', '--from', FROM, '--to', TO, '--format', 'csv', '--output', join(dir, 'all.csv'));
    expect(human.stdout).toMatch(new RegExp(`^Exported 7 usage events \\(\\d+ credits\\) of ${FROM} to ${TO} to .*all\\.csv \\(csv\\)\\.\\n$`));
  });

  it('exports every account and both environments unless told, and filters by each', { timeout: 60_000 }, () => {
    const ids = (...flags: string[]) =>
      csvRows(cli('usage', 'export', '--from', FROM, '--to', TO, '--format', 'csv', ...flags).stdout).map((row) => [row.account_id, row.environment]);
    expect(ids()).toHaveLength(answers.length + 2);
    expect(ids('--account', owner.accountId)).toHaveLength(answers.length + 1);
    expect(ids('--environment', 'test')).toEqual([[owner.accountId, 'test']]);
    expect(ids('--account', other.accountId)).toEqual([[other.accountId, 'live']]);
    // A period without traffic: the header alone.
    expect(cli('usage', 'export', '--from', '2001-01-01', '--format', 'csv').stdout).toBe(COLUMNS + '\r\n');
    expect(cli('usage', 'export', '--from', '2001-01-01', '--format', 'jsonl').stdout).toBe('');
  });

  // Each check is a process start (about a second); the flag rules one by one: test/unit/usage-export-format.test.ts.
  it('refuses bad flags with exit code 2 and an unknown account with 1, writing nothing', { timeout: 60_000 }, () => {
    for (const [args, message] of [
      [['--format', 'csv'], 'missing --from'],
      [['--from', '2025-02-30', '--format', 'csv'], "--from must be a calendar date YYYY-MM-DD (a UTC day), got '2025-02-30'"],
      [['--from', '2025-03-01', '2025-03-31', '--format', 'csv'], "usage export takes no argument '2025-03-31' (did you mean --to?)"],
      [['--from', '2025-03-01', '--format', 'csv', '--since', 'x'], "Unknown option '--since'"],
    ] as const) {
      const r = cli('usage', 'export', ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(message);
    }
    const file = join(dir, 'nobody.csv');
    const r = cli('usage', 'export', '--from', FROM, '--format', 'csv', '--account', 'acct_nobody', '--output', file);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("svc-gateway: no account 'acct_nobody'\n");
    expect(readdirSync(dir).filter((name) => name.startsWith('nobody.csv'))).toEqual([]);
  });

  it('is in the help text', () => {
    expect(cli('--help').stdout).toContain('usage export --from YYYY-MM-DD [--to YYYY-MM-DD] --format csv|jsonl');
  });
});
