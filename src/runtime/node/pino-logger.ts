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

export function pinoLogger(options: { level?: LogLevel; destination?: DestinationStream } = {}): Logger {
  const log = pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }), log: censorSecrets },
    },
    options.destination ?? pino.destination({ fd: 2, sync: false }),
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
