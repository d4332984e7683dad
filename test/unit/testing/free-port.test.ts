/**
 * `freePort` (cdk8s-operator-kit/testing): a port a test can give a server it starts. The
 * harness asks for hundreds of them per suite, while its own processes and every kubectl call
 * open outgoing connections; a port handed out twice, or taken by an outgoing connection before
 * the server binds it, failed a suite with EADDRINUSE.
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { freePort } from '../../../testing/control-plane';
import type * as FreePortModule from '../../../testing/free-port';

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

test('two processes never hand out the same port, even before the first one’s server binds it', async () => {
  // Two copies of the module stand for two jest workers (or two runs) of this machine, each with
  // its own memory of what it handed out; both draw the same candidates, in the same order.
  const copies = [0, 1].map(() => {
    let copy: typeof FreePortModule | undefined;
    jest.isolateModules(() => {
      copy = jest.requireActual<typeof FreePortModule>('../../../testing/free-port');
    });
    return copy!;
  });
  expect(copies[0]).not.toBe(copies[1]);
  const draws = [0.25, 0.5, 0.75];
  const random = jest.spyOn(Math, 'random');
  try {
    const ports: number[] = [];
    for (const copy of copies) {
      let draw = 0;
      random.mockImplementation(() => draws[draw++ % draws.length]!);
      // Not bound by anyone yet: as when the first worker's server is still starting.
      ports.push(await copy.freePort());
    }
    expect(ports[1]).not.toBe(ports[0]);
  } finally {
    random.mockRestore();
  }
});
