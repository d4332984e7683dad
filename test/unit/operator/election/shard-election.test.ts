/**
 * Shard ownership on Leases, on its own: the in-memory client and a virtual clock. Replicas take
 * different shards; after a change of the shard count, a new range waits for the earlier holder of
 * an overlapping range to let go — at once when it releases, after a lease duration when it stops
 * renewing — so a range is never reconciled by two processes.
 */
import pino from 'pino';
import { ShardElector } from '../../../../operator/runtime/election';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';
import { VirtualClock } from '../support/virtual-clock';

const logger = pino({ level: 'silent' });

function shardElector(client: FakeKubeClient, identity: string, shards: number, clock: VirtualClock) {
  return new ShardElector(client, {
    namespace: 'ops',
    name: 'op-leader',
    identity,
    shards,
    logger,
    clock,
    leaseDurationMs: 15_000,
    retryPeriodMs: 2_000,
  });
}

describe('ShardElector', () => {
  test('replicas take different shards, each with its range of the hash space', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const signal = new AbortController().signal;
    const a = await shardElector(client, 'a', 2, clock).acquire(signal);
    const b = await shardElector(client, 'b', 2, clock).acquire(signal);
    expect(new Set([a?.index, b?.index])).toEqual(new Set([0, 1]));
    expect(a?.range).not.toEqual(b?.range);
    // A third replica finds none free: a standby until one is.
    const stop = new AbortController();
    const standby = shardElector(client, 'c', 2, clock).acquire(stop.signal);
    while (clock.sleeps.length < 2) await new Promise((r) => setImmediate(r));
    stop.abort();
    expect(await standby).toBeUndefined();
  });

  test('a new shard count: the overlapping range is handed over when the earlier holder releases it', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const signal = new AbortController().signal;
    const old = shardElector(client, 'old', 1, clock);
    await old.acquire(signal);
    clock.advance(1_000); // the new Lease is taken after the old one
    const next = shardElector(client, 'new', 2, clock);
    expect((await next.acquire(signal))?.count).toBe(2);
    const handover = next.waitForHandover(signal);
    let handed = false;
    void handover.then(() => (handed = true));
    while (clock.sleeps.length < 1) await new Promise((r) => setImmediate(r));
    expect(handed).toBe(false);
    await old.release();
    expect(await handover).toBe(true);
  });

  test('a holder that stopped renewing hands its range over once its Lease is a lease duration old, on the waiter’s clock', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const signal = new AbortController().signal;
    await shardElector(client, 'old', 1, clock).acquire(signal);
    clock.advance(1_000);
    const next = shardElector(client, 'new', 2, clock);
    await next.acquire(signal);
    const before = clock.now();
    expect(await next.waitForHandover(signal)).toBe(true);
    // Retry periods until the old Lease had gone unchanged for 15 s as the waiter watched it.
    expect(clock.now() - before).toBeGreaterThanOrEqual(15_000);
    expect(clock.sleeps.every((ms) => ms === 2_000)).toBe(true);
  });
});
