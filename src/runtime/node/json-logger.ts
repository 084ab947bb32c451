import type { Logger } from '../../core/logger.js';

/** JSON lines on stderr: one object per event, easy to ship to any log pipeline. */
export function jsonLogger(stream: NodeJS.WritableStream = process.stderr): Logger {
  const write = (level: string, msg: string, fields?: Record<string, unknown>): void => {
    stream.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }) + '\n');
  };
  return {
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}
