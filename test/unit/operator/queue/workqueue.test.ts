import { RateLimiter, WorkQueue } from '../../../../operator/runtime/queue/workqueue';
import { exponentialDelay } from '../../../../operator/runtime/queue/backoff';

describe('WorkQueue', () => {
  test('de-duplicates keys added before they are processed', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  test('never hands one key to two workers; a key added while processing comes back after done', async () => {
    const q = new WorkQueue();
    q.add('a');
    const first = await q.get();
    expect(first).toBe('a');
    q.add('a'); // changed again while being reconciled
    expect(q.length).toBe(0); // not handed out while in flight
    let second: string | undefined;
    const pending = q.get().then((k) => {
      second = k;
    });
    await new Promise((r) => setImmediate(r));
    expect(second).toBeUndefined();
    q.done('a');
    await pending;
    expect(second).toBe('a');
  });

  test('workers waiting on an empty queue are woken by add, and by shutdown with undefined', async () => {
    const q = new WorkQueue();
    const waiting = [q.get(), q.get()];
    q.add('x');
    expect(await waiting[0]).toBe('x');
    q.shutDown();
    expect(await waiting[1]).toBeUndefined();
    q.add('y');
    expect(await q.get()).toBeUndefined();
  });

  test("a key added twice in one turn while a worker waits (an update's old and new object) is handed out once", async () => {
    const q = new WorkQueue();
    const worker = q.get();
    q.add('a');
    q.add('a');
    expect(await worker).toBe('a');
    q.done('a');
    expect(q.length).toBe(0);
    expect(q.isProcessing('a')).toBe(false);
  });

  test('keys added in one turn while a worker waits are handed out by priority', async () => {
    const q = new WorkQueue();
    const worker = q.get();
    q.add('resync', 'low');
    q.add('event', 'normal');
    expect(await worker).toBe('event');
    expect(await q.get()).toBe('resync');
  });

  test('addAfter delays a key; the earliest pending time wins', async () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue();
      q.addAfter('k', 1000);
      q.addAfter('k', 5000);
      jest.advanceTimersByTime(999);
      expect(q.length).toBe(0);
      jest.advanceTimersByTime(1);
      expect(q.length).toBe(1);
      jest.advanceTimersByTime(5000);
      expect(q.length).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  test('reports depth, adds, retries and latency', async () => {
    const seen = { depth: [] as number[], added: 0, retried: 0, latency: 0 };
    const q = new WorkQueue(new RateLimiter(), {
      depth: (n) => seen.depth.push(n),
      added: () => seen.added++,
      retried: () => seen.retried++,
      latency: () => seen.latency++,
    });
    q.add('a');
    q.add('b');
    await q.get();
    q.addRateLimited('c');
    expect(seen.added).toBe(2);
    expect(seen.retried).toBe(1);
    expect(seen.latency).toBe(1);
    expect(seen.depth).toEqual([1, 2, 1]);
    q.shutDown();
  });
});

describe('WorkQueue priorities', () => {
  /** Takes every key the queue holds, in the order it hands them out. */
  const drain = async (q: WorkQueue) => {
    const order: string[] = [];
    while (q.length > 0) {
      const key = await q.get();
      if (key === undefined) break;
      order.push(key);
      q.done(key);
    }
    return order;
  };

  test('normal keys go before low ones, each kind in the order added', async () => {
    const q = new WorkQueue();
    q.add('list-1', 'low');
    q.add('list-2', 'low');
    q.add('new-1');
    q.add('list-3', 'low');
    q.add('new-2');
    expect(await drain(q)).toEqual(['new-1', 'new-2', 'list-1', 'list-2', 'list-3']);
  });

  test('a low key added again at normal is promoted, once; a normal key added again at low stays normal', async () => {
    const q = new WorkQueue();
    q.add('a', 'low');
    q.add('b', 'low');
    q.add('b');
    q.add('c');
    q.add('c', 'low');
    expect(q.length).toBe(3);
    expect(await drain(q)).toEqual(['b', 'c', 'a']);
  });

  test('demote: the normal keys it does not keep go low, after the low ones already there, in their order; the kept ones stay ahead', async () => {
    const q = new WorkQueue();
    q.add('list-1', 'low');
    q.add('child-1');
    q.add('new');
    q.add('child-2');
    q.demote((key) => key === 'new');
    expect(q.length).toBe(4);
    expect(await drain(q)).toEqual(['new', 'list-1', 'child-1', 'child-2']);
    // A demoted key added again at normal is promoted as any low key is.
    q.add('a');
    q.add('b');
    q.demote(() => false);
    q.add('b');
    expect(await drain(q)).toEqual(['b', 'a']);
  });

  test('a low key added at normal while processed comes back at normal', async () => {
    const q = new WorkQueue();
    q.add('a', 'low');
    q.add('x', 'low');
    expect(await q.get()).toBe('a');
    expect(q.priorityOf('a')).toBe('low');
    q.add('a', 'low');
    q.add('a');
    q.done('a');
    expect(await drain(q)).toEqual(['a', 'x']);
  });

  test('a stream of normal keys does not starve the low ones: every lowEvery-th take is low', async () => {
    const q = new WorkQueue(undefined, undefined, { lowEvery: 3 });
    for (let i = 0; i < 3; i++) q.add(`low-${i}`, 'low');
    for (let i = 0; i < 6; i++) q.add(`n-${i}`);
    expect(await drain(q)).toEqual(['n-0', 'n-1', 'low-0', 'n-2', 'n-3', 'low-1', 'n-4', 'n-5', 'low-2']);
  });

  test('without priorities it is one first-in first-out queue', async () => {
    const q = new WorkQueue(undefined, undefined, { priorities: false });
    q.add('list-1', 'low');
    q.add('new-1');
    q.add('list-2', 'low');
    expect(await drain(q)).toEqual(['list-1', 'new-1', 'list-2']);
  });

  test('a delayed key keeps its priority; a normal add of the same pending key raises it', async () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue();
      q.addAfter('poll', 100, 'low');
      q.addAfter('retry', 100, 'low');
      q.addAfter('retry', 500, 'normal');
      q.add('later', 'low');
      jest.advanceTimersByTime(100);
      jest.useRealTimers();
      expect(await drain(q)).toEqual(['retry', 'later', 'poll']);
    } finally {
      jest.useRealTimers();
    }
  });

  test('workers whose reconciles need no I/O still let events in between keys', async () => {
    // A relist's no-op reconciles: had the queue handed keys out as resolved promises, the loop
    // below would take all 1000 before the watch event (here, an immediate) got a turn.
    const q = new WorkQueue();
    for (let i = 0; i < 1000; i++) q.add(`k-${i}`, 'low');
    let processed = 0;
    let eventSawProcessed = -1;
    setImmediate(() => {
      eventSawProcessed = processed;
    });
    while (q.length > 0) {
      const key = await q.get();
      processed++;
      if (key !== undefined) q.done(key);
    }
    expect(processed).toBe(1000);
    expect(eventSawProcessed).toBeGreaterThanOrEqual(0);
    expect(eventSawProcessed).toBeLessThan(10);
  });

  test('10,000 low keys and then a normal one: the normal one is next, and all 10,000 follow', async () => {
    const q = new WorkQueue();
    for (let i = 0; i < 10_000; i++) q.add(`old-${i}`, 'low');
    q.add('new');
    expect(await q.get()).toBe('new');
    q.done('new');
    expect((await drain(q)).length).toBe(10_000);
  });
});

describe('RateLimiter', () => {
  test('per-key exponential backoff from 5 ms doubling to 1000 s, reset by forget', () => {
    const rl = new RateLimiter({ qps: 1e9, burst: 1e9 });
    const delays = Array.from({ length: 5 }, () => rl.when('k'));
    expect(delays).toEqual([5, 10, 20, 40, 80]);
    for (let i = 0; i < 40; i++) rl.when('k');
    expect(rl.when('k')).toBe(1_000_000);
    expect(rl.when('other')).toBe(5);
    rl.forget('k');
    expect(rl.numRequeues('k')).toBe(0);
    expect(rl.when('k')).toBe(5);
  });

  test('an overall token bucket caps retries of many keys', () => {
    let now = 0;
    const rl = new RateLimiter({ qps: 10, burst: 3 }, () => now);
    expect([rl.when('a'), rl.when('b'), rl.when('c')]).toEqual([5, 5, 5]);
    expect(rl.when('d')).toBeCloseTo(100); // bucket empty: 1/qps
    expect(rl.when('e')).toBeCloseTo(200);
    now += 1000; // refills 10 tokens, capped at the burst of 3
    expect(rl.when('f')).toBe(5);
  });

  test('exponentialDelay never overflows', () => {
    expect(exponentialDelay(0, 5, 1000)).toBe(0);
    expect(exponentialDelay(10_000, 5, 1000)).toBe(1000);
  });
});
