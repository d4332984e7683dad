import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BuiltinTypes } from '../../../../constructs/contract';
import { HttpKubeClient, RateLimiter } from '../../../../operator/runtime/client';
import { parseFlags } from '../../../../operator/flags';
import { VirtualClock } from '../support/virtual-clock';

describe('the client-side rate limit (--kube-api-qps, --kube-api-burst)', () => {
  test('a burst goes at once, then requests are spaced at the QPS', async () => {
    const clock = new VirtualClock();
    const limiter = new RateLimiter(10, 3, clock);
    const wentAt: number[] = [];
    for (let i = 0; i < 6; i++) {
      await limiter.acquire();
      wentAt.push(clock.now());
    }
    // 3 at once (the burst), then one every 100 ms (10 a second).
    expect(wentAt).toEqual([0, 0, 0, 100, 200, 300]);
  });

  test('requests asking together queue in the order they asked, each reserving its turn before it waits', async () => {
    // The real clock: a virtual one would move time for all of them at the first sleep.
    const limiter = new RateLimiter(50, 1);
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async (_, i) => {
        await limiter.acquire();
        order.push(i);
      }),
    );
    expect(order).toEqual([0, 1, 2, 3]);
  });

  test('a quiet spell saves up no more than the burst', async () => {
    const clock = new VirtualClock();
    const limiter = new RateLimiter(10, 2, clock);
    await limiter.acquire();
    clock.advance(10_000);
    const waits = [await limiter.acquire(), await limiter.acquire(), await limiter.acquire()];
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBe(0);
    expect(waits[2]).toBeGreaterThan(0);
  });

  test('flags: off by default; a burst of 1.5 × the QPS unless given; nonsense refused', () => {
    expect(parseFlags([], ['memcached'])).toMatchObject({ kubeApiQps: 0, kubeApiBurst: 0 });
    expect(parseFlags(['--kube-api-qps=20'], ['memcached'])).toMatchObject({ kubeApiQps: 20, kubeApiBurst: 30 });
    expect(parseFlags(['--kube-api-qps=5', '--kube-api-burst=8'], ['memcached'])).toMatchObject({
      kubeApiQps: 5,
      kubeApiBurst: 8,
    });
    expect(() => parseFlags(['--kube-api-qps=fast'], ['memcached'])).toThrow(/--kube-api-qps must be a number/);
    expect(() => parseFlags(['--kube-api-burst=8'], ['memcached'])).toThrow(/--kube-api-burst needs --kube-api-qps/);
  });

  test('Lease requests are never held: leadership is renewed however many requests queue', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"metadata":{}}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const throttled: string[] = [];
    const client = new HttpKubeClient(
      {
        getCurrentCluster: () => ({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
        applyToHTTPSOptions: () => Promise.resolve(),
      },
      {
        fieldManager: 'test',
        // One request a second, one at once: a second ConfigMap read would wait; a Lease never.
        rateLimiter: new RateLimiter(1, 1, new VirtualClock()),
        onThrottle: (method, seconds) => throttled.push(`${method} ${seconds}`),
      },
    );
    try {
      await client.get(BuiltinTypes.ConfigMap, 'a', 'ns');
      await client.get(BuiltinTypes.Lease, 'leader', 'ns');
      await client.get(BuiltinTypes.ConfigMap, 'b', 'ns');
    } finally {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    }
    // Two ConfigMap reads went through the limiter (the second waited its second); the Lease read did not.
    expect(throttled).toEqual(['GET 0', 'GET 1']);
  });
});
