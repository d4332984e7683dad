import { EventEmitter } from 'node:events';
import { forwardSignals, SAME_REQUEST_MS } from '../../../command/forward-signals';

function setup() {
  const sent: NodeJS.Signals[] = [];
  const source = new EventEmitter();
  let clock = 10_000;
  forwardSignals(
    {
      kill: (signal) => {
        sent.push(signal);
        return true;
      },
    },
    source,
    () => clock,
  );
  return {
    sent,
    signal: (name: NodeJS.Signals, afterMs = 0) => {
      clock += afterMs;
      source.emit(name);
    },
  };
}

test('one Ctrl-C that arrives twice (the terminal and npm) is passed on once', () => {
  const s = setup();
  s.signal('SIGINT');
  s.signal('SIGINT', 5);
  expect(s.sent).toEqual(['SIGINT']);
});

test('a Ctrl-C pressed again later is passed on, so the reconciler can be made to exit at once', () => {
  const s = setup();
  s.signal('SIGINT');
  s.signal('SIGINT', SAME_REQUEST_MS + 1);
  expect(s.sent).toEqual(['SIGINT', 'SIGINT']);
});

test('SIGTERM is forwarded as SIGTERM, and counts with SIGINT as one request', () => {
  const s = setup();
  s.signal('SIGTERM');
  s.signal('SIGINT', 1);
  s.signal('SIGINT', SAME_REQUEST_MS);
  expect(s.sent).toEqual(['SIGTERM', 'SIGINT']);
});
