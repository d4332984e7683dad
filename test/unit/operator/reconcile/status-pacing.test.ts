/** StatusPacer: which Events a reconcile records while a status write waits. */
import { StatusPacer } from '../../../../operator/runtime/reconcile/status-pacing';
import { VirtualClock } from '../support/virtual-clock';

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

test('how long until a status may be written: the rest of the window after children changed or a write, 0 for a resource it knows nothing of', () => {
  const clock = new VirtualClock();
  const pacer = new StatusPacer(1000, clock);
  expect(pacer.writeWaitMs('ns/a')).toBe(0);
  const r = pacer.begin('ns/a');
  expect(r.waitBeforeWrite(true)).toBe(1000);
  r.end();
  clock.advance(300);
  expect(pacer.writeWaitMs('ns/a')).toBe(700);
  clock.advance(700);
  expect(pacer.writeWaitMs('ns/a')).toBe(0);
  const w = pacer.begin('ns/a');
  expect(w.waitBeforeWrite(false)).toBe(0);
  w.written();
  w.end();
  expect(pacer.writeWaitMs('ns/a')).toBe(1000);
  pacer.forget('ns/a');
  expect(pacer.writeWaitMs('ns/a')).toBe(0);
  expect(new StatusPacer(0, clock).writeWaitMs('ns/a')).toBe(0);
});
