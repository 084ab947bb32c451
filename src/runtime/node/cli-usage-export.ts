/**
 * `svc-gateway usage export`: the usage events (one per settled request) of a period, as CSV or JSON Lines,
 * for billing reconciliation (docs/configuration.md, "CLI"). The store is read a page at a time in
 * (settle time, event id) order, each page after the last row of the one before (UsageStore.events), and
 * each page is written before the next is read, so an export of millions of rows holds one page in memory.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Environment, UsageEventRow } from '../../store/types.js';
import { type Flags, requireAccount, required, str, withStore } from './cli-commands.js';
import { CliError, emit } from './cli-output.js';

const DAY_MS = 86_400_000;
/** Rows per store read. */
export const EXPORT_PAGE_SIZE = 1_000;

export type ExportFormat = 'csv' | 'jsonl';

/** The columns of both formats, in order: the CSV header and the keys of each JSON line. */
export const EXPORT_COLUMNS = [
  'event_id',
  'request_id',
  'time',
  'account_id',
  'environment',
  'key_id',
  'model',
  'routed_provider',
  'routed_model',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'credits',
  'shortfall_credits',
  'outcome',
  'latency_ms',
] as const;

type ExportRecord = Record<(typeof EXPORT_COLUMNS)[number], string | number>;

export function exportRecord(row: UsageEventRow): ExportRecord {
  return {
    event_id: row.id,
    request_id: row.requestId,
    time: new Date(row.at).toISOString(),
    account_id: row.accountId,
    environment: row.environment,
    key_id: row.keyId,
    model: row.model,
    routed_provider: row.routedProvider,
    routed_model: row.routedModel,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    cached_tokens: row.cachedTokens,
    reasoning_tokens: row.reasoningTokens,
    credits: row.credits,
    shortfall_credits: row.shortfallCredits,
    outcome: row.outcome,
    latency_ms: row.latencyMs,
  };
}

/** RFC 4180: a field with a comma, a double quote, CR or LF is enclosed in double quotes, its quotes doubled. */
export function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV record with its CRLF line break (RFC 4180). */
export function csvLine(fields: readonly (string | number)[]): string {
  return fields.map(csvField).join(',') + '\r\n';
}

export function csvHeader(): string {
  return csvLine(EXPORT_COLUMNS);
}

/** The text of a page of rows in the format, one line per row. */
export function formatRows(format: ExportFormat, rows: readonly UsageEventRow[]): string {
  let out = '';
  for (const row of rows) {
    const record = exportRecord(row);
    out += format === 'csv' ? csvLine(EXPORT_COLUMNS.map((column) => record[column])) : JSON.stringify(record) + '\n';
  }
  return out;
}

/** `YYYY-MM-DD`, a real calendar day, as the epoch ms of its UTC midnight. */
export function parseDay(value: string, flag: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new CliError(`--${flag} must be a calendar date YYYY-MM-DD (a UTC day), got '${value}'`, 2);
  }
  return ms;
}

export interface ExportOptions {
  format: ExportFormat;
  /** Inclusive UTC days. */
  from: string;
  to: string;
  startMs: number;
  endMs: number;
  accountId: string | null;
  environment: Environment | null;
  output: string | null;
}

/** Validates the flags (exit code 2 on a bad one) before the store is opened. */
export function exportOptions(flags: Flags): ExportOptions {
  const from = required(flags, 'from');
  const to = str(flags, 'to') ?? from;
  const startMs = parseDay(from, 'from');
  const toMs = parseDay(to, 'to');
  if (toMs < startMs) throw new CliError(`--to (${to}) is before --from (${from})`, 2);
  const format = required(flags, 'format');
  if (format !== 'csv' && format !== 'jsonl') throw new CliError(`--format must be csv or jsonl, got '${format}'`, 2);
  const environment = str(flags, 'environment') ?? null;
  if (environment !== null && environment !== 'live' && environment !== 'test') {
    throw new CliError(`--environment must be live or test, got '${environment}'`, 2);
  }
  const accountId = str(flags, 'account') ?? null;
  if (accountId === '') throw new CliError('--account must not be empty', 2);
  const output = str(flags, 'output') ?? null;
  if (output === '') throw new CliError('--output must not be empty', 2);
  return { format, from, to, startMs, endMs: toMs + DAY_MS, accountId, environment, output };
}

/** Writes with backpressure; a stream error (EPIPE, ENOSPC, ...) rejects the write that follows it. */
class Sink {
  private error: Error | null = null;

  constructor(readonly stream: Writable) {
    stream.on('error', (e: Error) => {
      this.error ??= e;
    });
  }

  async write(chunk: string): Promise<void> {
    if (this.error) throw this.error;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
    if (this.error) throw this.error;
  }
}

export interface ExportTotals {
  events: number;
  credits: number;
}

/** Pages through the store and writes every row of the period to the sink. */
async function writeExport(sink: Sink, options: ExportOptions): Promise<ExportTotals> {
  return withStore(async (store) => {
    if (options.accountId !== null) await requireAccount(store, options.accountId);
    const totals: ExportTotals = { events: 0, credits: 0 };
    if (options.format === 'csv') await sink.write(csvHeader());
    let after: { at: number; id: number } | null = null;
    for (;;) {
      const page = await store.usage.events({
        startMs: options.startMs,
        endMs: options.endMs,
        accountId: options.accountId,
        environment: options.environment,
        after,
        limit: EXPORT_PAGE_SIZE,
      });
      if (page.length > 0) await sink.write(formatRows(options.format, page));
      for (const row of page) {
        totals.events += 1;
        totals.credits += row.credits;
      }
      const last = page.at(-1);
      if (page.length < EXPORT_PAGE_SIZE || last === undefined) return totals;
      after = { at: last.at, id: last.id };
    }
  });
}

function isBrokenPipe(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'EPIPE';
}

/**
 * To stdout by default. With --output the rows go to a temporary file beside FILE, renamed to FILE once
 * complete, so FILE is never a partial export (an existing FILE is replaced); a summary is printed instead.
 */
export async function usageExport(flags: Flags, positionals: readonly string[], json: boolean): Promise<void> {
  // `--from 2025-03-01 2025-03-31` would otherwise export one day without a word.
  if (positionals.length > 0) throw new CliError(`usage export takes no argument '${positionals.join(' ')}' (did you mean --to?)`, 2);
  const options = exportOptions(flags);
  if (options.output === null) {
    try {
      await writeExport(new Sink(process.stdout), options);
    } catch (e) {
      // The reader went away (`| head`): it has what it wanted.
      if (!isBrokenPipe(e)) throw e;
    }
    return;
  }
  const file = options.output;
  const partial = `${file}.partial-${process.pid}`;
  const stream = createWriteStream(partial, { flags: 'wx' });
  let totals: ExportTotals;
  try {
    await once(stream, 'open');
    totals = await writeExport(new Sink(stream), options);
    stream.end();
    await finished(stream);
    await rename(partial, file);
  } catch (e) {
    stream.destroy();
    await rm(partial, { force: true });
    // A file system error (it names its syscall) is about FILE; anything else (the store) is reported as is.
    if (typeof e === 'object' && e !== null && 'syscall' in e) {
      throw new CliError(`cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
    throw e;
  }
  emit(
    json,
    {
      object: 'usage_export',
      file,
      format: options.format,
      from: options.from,
      to: options.to,
      account_id: options.accountId,
      environment: options.environment,
      events: totals.events,
      credits: totals.credits,
    },
    `Exported ${totals.events} usage events (${totals.credits} credits) of ${options.from === options.to ? options.from : `${options.from} to ${options.to}`} ` +
      `to ${file} (${options.format}).`,
  );
}
