/** `svc-gateway usage export`: the CSV and JSON Lines encodings and the flag checks (src/runtime/node/cli-usage-export.ts). */
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/runtime/node/cli-output.js';
import { EXPORT_COLUMNS, csvField, csvHeader, csvLine, exportOptions, formatRows } from '../../src/runtime/node/cli-usage-export.js';
import type { UsageEventRow } from '../../src/store/types.js';

const row: UsageEventRow = {
  id: 42,
  requestId: 'req_abc',
  at: Date.UTC(2025, 2, 1, 10, 30, 0, 5),
  accountId: 'acct_1',
  environment: 'live',
  keyId: 'key_1',
  model: 'svc-fast',
  routedProvider: 'acme',
  routedModel: 'acme/fast, "v2"\r\nbeta',
  promptTokens: 10,
  completionTokens: 20,
  cachedTokens: 3,
  reasoningTokens: 4,
  credits: 5,
  shortfallCredits: 1,
  outcome: 'completed',
  latencyMs: 99,
};

/** An RFC 4180 reader, written apart from the encoder, to check that what is written reads back. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i += 1;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else if (text[i] === '"') break;
        else if (i >= text.length) throw new Error('unterminated quote');
        else field += text[i++];
      }
      i += 1;
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
    } else if (text[i] === '\r' || text[i] === '\n') {
      throw new Error(`bare line break in an unquoted field at ${i}`);
    } else field += text[i++];
  }
  if (field !== '' || fields.length > 0) throw new Error('last record without CRLF');
  return records;
}

describe('usage export: CSV (RFC 4180)', () => {
  it('quotes a field only when it holds a comma, a quote, CR or LF, doubling its quotes', () => {
    expect(csvField('plain-value_1.2:x')).toBe('plain-value_1.2:x');
    expect(csvField(1234)).toBe('1234');
    expect(csvField('')).toBe('');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('"')).toBe('""""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(' spaced ')).toBe(' spaced ');
    expect(csvLine(['a', 'b,c', 3])).toBe('a,"b,c",3\r\n');
  });

  it('writes the header and each row in the documented columns, and reads back to the same values', () => {
    expect(csvHeader()).toBe(
      'event_id,request_id,time,account_id,environment,key_id,model,routed_provider,routed_model,prompt_tokens,' +
        'completion_tokens,cached_tokens,reasoning_tokens,credits,shortfall_credits,outcome,latency_ms\r\n',
    );
    const text = csvHeader() + formatRows('csv', [row, { ...row, id: 43, routedModel: 'plain' }]);
    expect(text).toContain(',"acme/fast, ""v2""\r\nbeta",');
    expect(parseCsv(text)).toEqual([
      [...EXPORT_COLUMNS],
      ['42', 'req_abc', '2025-03-01T10:30:00.005Z', 'acct_1', 'live', 'key_1', 'svc-fast', 'acme', 'acme/fast, "v2"\r\nbeta', '10', '20', '3', '4', '5', '1', 'completed', '99'],
      ['43', 'req_abc', '2025-03-01T10:30:00.005Z', 'acct_1', 'live', 'key_1', 'svc-fast', 'acme', 'plain', '10', '20', '3', '4', '5', '1', 'completed', '99'],
    ]);
    expect(formatRows('csv', [])).toBe('');
  });
});

describe('usage export: JSON Lines', () => {
  it('writes one JSON object per line, numbers as numbers, the same keys as the CSV header', () => {
    const text = formatRows('jsonl', [row, row]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const parsed = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([...EXPORT_COLUMNS]);
    expect(parsed).toEqual({
      event_id: 42,
      request_id: 'req_abc',
      time: '2025-03-01T10:30:00.005Z',
      account_id: 'acct_1',
      environment: 'live',
      key_id: 'key_1',
      model: 'svc-fast',
      routed_provider: 'acme',
      routed_model: 'acme/fast, "v2"\r\nbeta',
      prompt_tokens: 10,
      completion_tokens: 20,
      cached_tokens: 3,
      reasoning_tokens: 4,
      credits: 5,
      shortfall_credits: 1,
      outcome: 'completed',
      latency_ms: 99,
    });
  });
});

describe('usage export: flags', () => {
  const DAY = 86_400_000;

  it('takes inclusive UTC days, --to defaulting to --from', () => {
    expect(exportOptions({ from: '2025-03-01', format: 'csv' })).toEqual({
      format: 'csv',
      from: '2025-03-01',
      to: '2025-03-01',
      startMs: Date.UTC(2025, 2, 1),
      endMs: Date.UTC(2025, 2, 1) + DAY,
      accountId: null,
      environment: null,
      output: null,
    });
    expect(
      exportOptions({ from: '2024-02-28', to: '2024-02-29', format: 'jsonl', account: 'acct_1', environment: 'test', output: 'x.jsonl' }),
    ).toMatchObject({ startMs: Date.UTC(2024, 1, 28), endMs: Date.UTC(2024, 2, 1), accountId: 'acct_1', environment: 'test', output: 'x.jsonl' });
  });

  it.each([
    [{ format: 'csv' }, /missing --from/],
    [{ from: '2025-03-01' }, /missing --format/],
    [{ from: '2025-3-1', format: 'csv' }, /--from must be a calendar date/],
    [{ from: '2025-02-29', format: 'csv' }, /--from must be a calendar date/],
    [{ from: '2025-03-01T00:00:00Z', format: 'csv' }, /--from must be a calendar date/],
    [{ from: '2025-03-01', to: '2025-13-01', format: 'csv' }, /--to must be a calendar date/],
    [{ from: '2025-03-02', to: '2025-03-01', format: 'csv' }, /--to \(2025-03-01\) is before --from \(2025-03-02\)/],
    [{ from: '2025-03-01', format: 'xml' }, /--format must be csv or jsonl, got 'xml'/],
    [{ from: '2025-03-01', format: 'csv', environment: 'prod' }, /--environment must be live or test, got 'prod'/],
    [{ from: '2025-03-01', format: 'csv', account: '' }, /--account must not be empty/],
    [{ from: '2025-03-01', format: 'csv', output: '' }, /--output must not be empty/],
  ])('refuses %o with exit code 2', (flags, message) => {
    let error: unknown;
    try {
      exportOptions(flags);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toMatch(message);
  });
});
