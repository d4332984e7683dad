import { Writable } from 'node:stream';
import { createLogger, textLine } from '../../../../operator/runtime/observability/logger';
import { parseFlags } from '../../../../operator/flags';

/** Lines a logger writes, in the given format. */
function capture(format: 'json' | 'text') {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger('info', out, format);
  return { logger, lines };
}

test('text: time, level, component and message first, then the fields; an error by its message', () => {
  const { logger, lines } = capture('text');
  const child = logger.child({ component: 'informer', controller: 'memcached' });
  child.info({ resource: 'memcacheds', resourceVersion: '410' }, 'watch resourceVersion expired; listing again');
  child.warn({ err: new Error('connection aborted'), note: 'two words' }, 'watch failed');
  expect(lines[0]).toMatch(
    /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}informer watch resourceVersion expired; listing again {2}controller=memcached resource=memcacheds resourceVersion=410$/,
  );
  expect(lines[1]).toMatch(
    / WARN {2}informer watch failed {2}controller=memcached note="two words" error="connection aborted"$/,
  );
});

test('json stays the default: one object per line, each key once', () => {
  const { logger, lines } = capture('json');
  logger.child({ component: 'events' }).info({ object: 'mc' }, 'recorded');
  expect(JSON.parse(lines[0] ?? '')).toMatchObject({
    level: 'info',
    logger: 'manager',
    component: 'events',
    msg: 'recorded',
  });
  expect(parseFlags([], ['memcached']).logFormat).toBe('json');
  expect(parseFlags(['--log-format=text'], ['memcached']).logFormat).toBe('text');
  expect(() => parseFlags(['--log-format=pretty'], ['memcached'])).toThrow('--log-format must be json or text');
});

test('a line that is not JSON is written as it is', () => {
  expect(textLine('plain')).toBe('plain\n');
});
