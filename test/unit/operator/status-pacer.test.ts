/** StatusPacer: which Events a reconcile records while a status write waits. */
import { StatusPacer } from '../../../operator/runtime/status-pacer';
import { VirtualClock } from './virtual-clock';

const warning = (message: string) => ({ type: 'Warning', reason: 'PodUnschedulable', message });
const normal = (message: string) => ({ type: 'Normal', reason: 'Created', message });

test('while a status write waits, a Warning is recorded once per reason, whatever its words; Normal Events once per message', () => {
  const pacer = new StatusPacer(1000, new VirtualClock());
  const first = pacer.begin('ns/a');
  expect(first.isNewEvent(warning('0/2 nodes are available: 2 did not match'))).toBe(true);
  expect(first.isNewEvent(normal('Created Job a-seed'))).toBe(true);
  expect(first.waitBeforeWrite(true)).toBeGreaterThan(0);
  first.end();
  // The next reconcile, before the write: the same failure in other words, and another child.
  const second = pacer.begin('ns/a');
  expect(second.isNewEvent(warning('0/2 nodes are available: 1 did not match, 1 is tainted'))).toBe(false);
  expect(second.isNewEvent({ ...warning('x'), reason: 'PodFailing' })).toBe(true);
  expect(second.isNewEvent(normal('Created Job a-seed'))).toBe(false);
  expect(second.isNewEvent(normal('Created Deployment a-gateway'))).toBe(true);
  second.end();
});

test('once the status is written, what was recorded is forgotten: the next transition records again', () => {
  const pacer = new StatusPacer(0, new VirtualClock());
  const first = pacer.begin('ns/a');
  expect(first.isNewEvent(warning('a'))).toBe(true);
  expect(first.waitBeforeWrite(false)).toBe(0);
  first.written();
  first.end();
  const second = pacer.begin('ns/a');
  expect(second.isNewEvent(warning('a'))).toBe(true);
  second.end();
});
