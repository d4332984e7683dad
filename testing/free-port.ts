import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

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

/**
 * Ports handed out by the processes sharing a temporary directory, a file each: the jest workers
 * of a run (its TMPDIR) each remember only their own. A port found free may be one another process
 * handed out whose server has not bound it yet (a reconciler still loading); the file keeps it
 * from being handed out again until that server has had time to bind it, after which a bound
 * port is found taken anyway.
 */
const reservations = () => path.join(os.tmpdir(), 'opkit-free-ports'); // read when asked: a run sets TMPDIR after imports

/** How long a port handed out is kept from the machine's other processes: far beyond any server's start. */
const RESERVED_MS = 5 * 60_000;

/** Reserves `port` for this process: false when another process of the machine did lately. */
function reserve(port: number): boolean {
  const dir = reservations();
  const file = path.join(dir, String(port));
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    // Nowhere to keep reservations: this process's memory alone, as before them.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return true;
  }
  let reservedAt: number;
  try {
    reservedAt = fs.statSync(file).mtimeMs;
  } catch {
    return reserve(port); // let go meanwhile
  }
  if (Date.now() - reservedAt < RESERVED_MS) return false;
  // An old reservation: its server bound the port long ago, or never will.
  fs.writeFileSync(file, String(process.pid));
  return true;
}

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
 * the next `listen(0)`). And a port is handed out once: never twice by one process, and not by
 * another process of the machine while the first one's server may still be starting (see
 * reservations).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const candidate =
      EPHEMERAL_START - LOWEST > 1000 ? LOWEST + Math.floor(Math.random() * (EPHEMERAL_START - LOWEST)) : 0;
    if (handedOut.has(candidate)) continue;
    const port = await tryPort(candidate);
    if (port !== undefined && !handedOut.has(port) && reserve(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free TCP port on 127.0.0.1 after 200 tries');
}
