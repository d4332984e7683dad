/**
 * `freePort` (cdk8s-operator-kit/testing): a port a test can give a server it starts. The
 * harness asks for hundreds of them per suite, while its own processes and every kubectl call
 * open outgoing connections; a port handed out twice, or taken by an outgoing connection before
 * the server binds it, failed a suite with EADDRINUSE.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { freePort } from '../../../testing/control-plane';

function ephemeralRangeStart(): number {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 32768;
  }
}

function bind(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () =>
      srv.close(() => {
        resolve();
      }),
    );
  });
}

test('never hands out the same port twice in one process, one after the other or at once', async () => {
  const sequential: number[] = [];
  for (let i = 0; i < 300; i++) sequential.push(await freePort());
  const concurrent = await Promise.all(Array.from({ length: 100 }, () => freePort()));
  const all = [...sequential, ...concurrent];
  expect(new Set(all).size).toBe(all.length);
});

test('gives ports below the range the kernel takes outgoing connections’ local ports from, that can be bound', async () => {
  const start = ephemeralRangeStart();
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const p of ports) {
    expect(p).toBeGreaterThanOrEqual(1024);
    expect(p).toBeLessThan(start);
  }
  for (const p of ports) await bind(p);
});
