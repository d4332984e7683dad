import pino from 'pino';
import { ApiError } from '../../../operator/runtime/client';
import { rejectionOf } from '../../../operator/runtime/children';
import type { ReconcileContext } from '../../../operator/runtime/controller';

function fakeContext() {
  const events: string[] = [];
  const ctx = {
    client: {},
    logger: pino({ level: 'silent' }),
    recorder: { record: async (_o: unknown, type: string, reason: string) => { events.push(`${type}/${reason}`); } },
  } as unknown as ReconcileContext;
  return { ctx, events };
}

const owner = (degraded: boolean) => ({
  metadata: { name: 'x', namespace: 'ns', uid: 'u' },
  status: { conditions: [{ type: 'Degraded', status: degraded ? 'True' : 'False', reason: 'r', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
});

describe('rejectionOf', () => {
  test('an invalid request becomes a message and one Warning Event, not a retry', async () => {
    const { ctx, events } = fakeContext();
    const msg = await rejectionOf(ctx, owner(false), 'InvalidThing', async () => { throw new ApiError(422, 'Invalid', 'PATCH x: 422 Invalid: spec.replicas: must be >= 0'); });
    expect(msg).toContain('spec.replicas');
    expect(events).toEqual(['Warning/InvalidThing']);
  });

  test('no second Warning while the object is already Degraded (a resync writes nothing)', async () => {
    const { ctx, events } = fakeContext();
    await rejectionOf(ctx, owner(true), 'InvalidThing', async () => { throw new ApiError(400, 'BadRequest', 'bad'); });
    expect(events).toEqual([]);
  });

  test('other errors are thrown, to be retried with backoff; success returns nothing', async () => {
    const { ctx } = fakeContext();
    await expect(rejectionOf(ctx, owner(false), 'X', async () => { throw new ApiError(500, 'InternalError', 'boom'); })).rejects.toThrow('boom');
    await expect(rejectionOf(ctx, owner(false), 'X', async () => { throw new Error('ECONNRESET'); })).rejects.toThrow('ECONNRESET');
    expect(await rejectionOf(ctx, owner(false), 'X', async () => undefined)).toBeUndefined();
  });
});
