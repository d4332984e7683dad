import * as fs from 'node:fs';
import * as net from 'node:net';

/** Ports this process has handed out: never again, even once they are free. */
const handedOut = new Set<number>();

/** Lowest port a listener gets from here: the well-known and common service ports stay clear. */
const LOWEST = 10_000;

/**
 * Where the kernel takes the local ports of outgoing connections (and of `listen(0)`) from; a
 * port found free there can be taken by any `connect` before the server that was given it binds.
 */
function ephemeralRangeStart(): number {
  try {
    const start = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > 0 ? start : 32_768;
  } catch {
    return 32_768; // Linux's default; other systems start at 49152
  }
}

const EPHEMERAL_START = ephemeralRangeStart();

/** Binds `port` on loopback and lets it go: the port it got, or undefined when it was taken. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', () => {
      resolve(undefined);
    });
    srv.listen(port, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => {
        resolve(typeof address === 'object' && address !== null ? address.port : undefined);
      });
    });
  });
}

/**
 * A free TCP port on loopback for a server a test is about to start, found by binding it and
 * letting it go. Someone else can still take it before the server binds it; two rules keep that
 * rare. A port comes from below the kernel's ephemeral range, where nothing is handed a port
 * without asking for it by number (outgoing connections — every kubectl and API call a test
 * makes — take theirs from that range, and the kernel readily gives a just-released port to
 * the next `listen(0)`). And one process never hands out the same port twice.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const candidate =
      EPHEMERAL_START - LOWEST > 1000 ? LOWEST + Math.floor(Math.random() * (EPHEMERAL_START - LOWEST)) : 0;
    if (handedOut.has(candidate)) continue;
    const port = await tryPort(candidate);
    if (port !== undefined && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free TCP port on 127.0.0.1 after 200 tries');
}
