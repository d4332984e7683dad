/**
 * Leader election on a Lease, on its own: the in-memory client and a virtual clock, so every
 * lease duration and renewal is exact and no test waits on real time. Taken, renewed, kept from a
 * live holder and taken over from a dead one, lost on a missed renewal, released on stop.
 */
import pino from 'pino';
import { BuiltinTypes, type Lease } from '../../../../constructs/contract';
import { LeaderElector } from '../../../../operator/runtime/election';
import { FakeKubeClient } from '../../../../testing/fake-kube-client';
import { VirtualClock } from '../support/virtual-clock';

const logger = pino({ level: 'silent' });
const LEASE = { namespace: 'ops', name: 'op-leader' };

function elector(client: FakeKubeClient, identity: string, clock: VirtualClock, changes: boolean[] = []) {
  return new LeaderElector(client, {
    ...LEASE,
    identity,
    logger,
    clock,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    onLeaderChange: (leading) => changes.push(leading),
  });
}

const lease = (client: FakeKubeClient): Lease | undefined =>
  client.peek(BuiltinTypes.Lease, LEASE.name, LEASE.namespace);

describe('LeaderElector', () => {
  test('takes a Lease no one holds, as its holder, for the lease duration', async () => {
    const client = new FakeKubeClient();
    const changes: boolean[] = [];
    const a = elector(client, 'a', new VirtualClock(), changes);
    expect(await a.tryOnce()).toBe(true);
    expect(a.isLeader).toBe(true);
    expect(changes).toEqual([true]);
    expect(lease(client)?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(a.acquiredAt).toBe(lease(client)?.spec.acquireTime);
  });

  test('renews every retry period while it holds, and stops cleanly when asked', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const a = elector(client, 'a', clock);
    await a.tryOnce();
    const first = lease(client)?.spec.renewTime;
    const stop = new AbortController();
    const holding = a.holdUntilLost(stop.signal);
    // Three renewals, then the stop.
    while (clock.sleeps.length < 3) await new Promise((r) => setImmediate(r));
    stop.abort();
    expect(await holding).toBe(true);
    expect(clock.sleeps.slice(0, 3)).toEqual([2_000, 2_000, 2_000]);
    expect(lease(client)?.spec.renewTime).not.toBe(first);
    expect(lease(client)?.spec.holderIdentity).toBe('a');
  });

  test('a live holder keeps it; one that stopped renewing for a whole lease duration (on the follower’s clock) is taken over', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    await elector(client, 'a', clock).tryOnce();
    const b = elector(client, 'b', clock);
    expect(await b.tryOnce()).toBe(false);
    clock.advance(14_999);
    expect(await b.tryOnce()).toBe(false);
    clock.advance(1);
    expect(await b.tryOnce()).toBe(true);
    expect(lease(client)?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  test('loses it when another takes the Lease: it says so and stops leading', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const changes: boolean[] = [];
    const a = elector(client, 'a', clock, changes);
    await a.tryOnce();
    const held = lease(client);
    if (!held) throw new Error('no lease');
    // Someone else's update (a partition healed, a forced takeover): the record is theirs now.
    await client.update(BuiltinTypes.Lease, { ...held, spec: { ...held.spec, holderIdentity: 'z' } });
    expect(await a.holdUntilLost(new AbortController().signal)).toBe(false);
    expect(a.isLeader).toBe(false);
    expect(changes).toEqual([true, false]);
  });

  test('loses it after the renew deadline when renewals keep failing', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const a = elector(client, 'a', clock);
    await a.tryOnce();
    // Every renewal fails from now on (the API server unavailable to it).
    client.update = () => Promise.reject(Object.assign(new Error('unavailable'), { status: 503 }));
    expect(await a.holdUntilLost(new AbortController().signal)).toBe(false);
    // Given up once 10 s had passed without a renewal: five retry periods.
    expect(clock.sleeps).toEqual([2_000, 2_000, 2_000, 2_000, 2_000]);
  });

  test('release on stop empties the holder, so a successor need not wait a lease duration', async () => {
    const client = new FakeKubeClient();
    const clock = new VirtualClock();
    const a = elector(client, 'a', clock);
    await a.tryOnce();
    await a.release();
    expect(a.isLeader).toBe(false);
    expect(lease(client)?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(await elector(client, 'b', clock).tryOnce()).toBe(true);
  });
});
