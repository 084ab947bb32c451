/**
 * The logging seam. The Node runtime writes pino JSON lines (src/runtime/node/pino-logger.ts); tests pass a
 * silent or capturing logger. Never log secrets, and no prompt or completion text at any level.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
