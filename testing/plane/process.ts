/**
 * The processes of a control plane: started with their output in a log file, probed over TLS,
 * waited on (failing at once when one exits), and stopped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';

/** Progress on stderr, when verbose. */
export function log(verbose: boolean, msg: string): void {
  if (verbose) process.stderr.write(`[control-plane] ${msg}\n`);
}

/** GET a path (https, or plain http on loopback) with a bearer token; resolves with the status code (0 on connection error). */
export function probe(url: string, ca: Buffer, token?: string): Promise<number> {
  const get = url.startsWith('http:') ? http.get : https.get;
  return new Promise((resolve) => {
    const req = get(
      url,
      {
        ca,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        rejectUnauthorized: !!ca.length,
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => {
      resolve(0);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

/** In a plane's logs directory, when a process of it exited while waited on: what exited. */
const EXITED_MARK = 'EXITED';

/** Whether a process of the plane whose logs are in `logsDir` exited while waited on (its logs are kept). */
export function processExitedIn(logsDir: string): boolean {
  return fs.existsSync(path.join(logsDir, EXITED_MARK));
}

/** Polls `check` until true; fails when a process of the plane exits, or after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  procs: ChildProcess[],
  timeoutMs: number,
  logsDir: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = procs.find((p) => p.exitCode !== null || p.signalCode !== null);
    if (dead) {
      const said = `${what}: a control-plane process exited (${dead.spawnfile}, code ${dead.exitCode}); see logs in ${logsDir}`;
      // The plane keeps logs so marked when it stops: the error names them.
      fs.appendFileSync(path.join(logsDir, EXITED_MARK), `${said}\n`);
      throw new Error(said);
    }
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not ready within ${timeoutMs / 1000}s; see logs in ${logsDir}`);
}

/** Starts a binary with stdout and stderr appended to `logFile`. */
export function startProcess(
  bin: string,
  args: string[],
  logFile: string,
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', out, out], detached: false, env });
  fs.closeSync(out);
  return child;
}

/** SIGTERM, then SIGKILL after 5 s. */
export async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) =>
    p.once('exit', () => {
      r();
    }),
  );
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** Waits until a component's `/healthz` on its loopback secure port answers 200 (its own certificate, not checked). */
export function waitForHealthz(
  what: string,
  port: number,
  plane: { readonly procs: ChildProcess[]; readonly logs: string },
): Promise<void> {
  const healthy = async () => (await probe(`https://127.0.0.1:${port}/healthz`, Buffer.alloc(0))) === 200;
  return waitFor(what, healthy, plane.procs, 60_000, plane.logs);
}
