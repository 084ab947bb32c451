/**
 * The Node runtime's logger: pino, one JSON line per event on stderr (stdout carries the CLI's own output).
 * `SVC_LOG_LEVEL` (debug, info, warn, error; default info) picks the level. Whatever the level, fields that
 * could hold a secret are censored by name (./log-censor.ts), as a second line of defence: the code logs key
 * ids, never keys.
 */
import { pino, type DestinationStream } from 'pino';
import type { Logger } from '../../core/logger.js';
import { censorSecrets } from './log-censor.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Bytes of log lines gathered before one write to stderr. */
const LOG_BUFFER_BYTES = 4096;
/** The longest a line waits in that buffer on a quiet gateway. */
const LOG_FLUSH_MS = 1000;

/**
 * stderr, written in blocks: an access line per request written on its own costs a write call handed to
 * libuv's thread pool, about 2% of a request's CPU under load (bench/profile.mjs). sonic-boom flushes the
 * block every LOG_FLUSH_MS on a quiet gateway, and pino flushes what is left when the process exits; a
 * kill -9 loses at most the last block.
 */
function bufferedStderr(): DestinationStream {
  return pino.destination({ fd: 2, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
}

export function pinoLogger(options: { level?: LogLevel; destination?: DestinationStream } = {}): Logger {
  const log = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: censorSecrets },
    },
    options.destination ?? bufferedStderr(),
  );
  return {
    debug: (msg, fields) => log.debug(fields ?? {}, msg),
    info: (msg, fields) => log.info(fields ?? {}, msg),
    warn: (msg, fields) => log.warn(fields ?? {}, msg),
    error: (msg, fields) => log.error(fields ?? {}, msg),
  };
}

export function logLevelOf(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new Error(`SVC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${value}'`);
}
