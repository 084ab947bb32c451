import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { pinoLogger } from '../../src/runtime/node/pino-logger.js';

/** The lines a real pino logger writes, parsed. */
function capture(): { lines: () => Record<string, unknown>[]; destination: Writable } {
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return { destination, lines: () => text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('the Node logger censors secret-named fields', () => {
  it('at the top of a line and one level down, leaving the caller\'s objects unchanged', () => {
    const sink = capture();
    const log = pinoLogger({ level: 'debug', destination: sink.destination });
    const nested = { authorization: 'Bearer svc_live_x', keyId: 'key_1', token: 't0k' };
    const fields = { secret: 's3cr3t', request: nested, messages: [{ role: 'user', content: 'hi' }], status: 200 };
    log.info('one', fields);
    const [line] = sink.lines();
    expect(line).toMatchObject({
      msg: 'one',
      level: 'info',
      secret: '[redacted]',
      messages: '[redacted]',
      status: 200,
      request: { authorization: '[redacted]', keyId: 'key_1', token: '[redacted]' },
    });
    expect(fields.secret).toBe('s3cr3t');
    expect(nested.authorization).toBe('Bearer svc_live_x');
  });

  it('passes a line with nothing to censor through as it is, and keeps arrays and errors intact', () => {
    const sink = capture();
    const log = pinoLogger({ level: 'debug', destination: sink.destination });
    log.warn('two', { keyId: 'key_2', targets: [{ token: 'not looked into' }], err: new Error('boom') });
    const [line] = sink.lines();
    expect(line?.keyId).toBe('key_2');
    expect(line?.targets).toEqual([{ token: 'not looked into' }]);
    expect(line?.err).toMatchObject({ message: 'boom', type: 'Error' });
  });

  it('censors every secret name it knows', () => {
    const sink = capture();
    const log = pinoLogger({ level: 'debug', destination: sink.destination });
    log.error('three', { a: { password: 'pw' }, apiKey: 'k', api_key: 'k2', input: 'text', prompt: 'p' });
    const [line] = sink.lines();
    expect(line).toMatchObject({ a: { password: '[redacted]' }, apiKey: '[redacted]', api_key: '[redacted]', input: '[redacted]', prompt: '[redacted]' });
  });
});
