/**
 * A spare kube-apiserver beside a plane's own: the same etcd, flags and credentials, a process
 * and a port of its own. A client pointed at it can be put through a real API server restart —
 * its watches and requests broken, the server's watch cache begun again, so a watch resumed from
 * an older resourceVersion may be answered 410 Gone and must list again — while the plane's own
 * API server serves everyone else (the tests' clients, other reconcilers). How an HA control plane
 * runs several API servers on one etcd, and how a rolling upgrade restarts each in turn.
 */
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { type ApiserverOptions, startApiserver, waitForApiserver } from './apiserver';
import { writeKubeconfig } from './pki';
import { freePort } from '../free-port';
import { stopProcess } from './process';

export interface SpareApiserver {
  /** https://<address>:<its port> */
  readonly server: string;
  /**
   * An admin kubeconfig for it, written beside the plane's own: where a reconciler with
   * --webhook-loopback finds the plane's Service routes (the spare sends webhook calls through
   * the plane's egress proxy too).
   */
  readonly kubeconfig: string;
  /** Its audit log, when the plane keeps one: the requests made through it are recorded there. */
  readonly auditLog?: string;
  /**
   * Stops it (SIGTERM: its requests and watches end, as in a rolling upgrade) and starts it again
   * on the same port; resolves once it serves again.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** What a spare needs of its plane. */
export interface SpareApiserverPlane {
  /** The plane's own API server's options; the spare's port and name are its own. */
  readonly apiserver: Omit<ApiserverOptions, 'port' | 'name'>;
  readonly caFile: string;
  readonly adminToken: string;
  /** The plane's admin kubeconfig: the spare's is written beside it. */
  readonly kubeconfig: string;
  /** The plane's processes: the spare's is among them while it runs, so the plane's stop stops it. */
  readonly procs: ChildProcess[];
  readonly logs: string;
}

let spares = 0;

/** Starts a spare API server of `plane`; resolves once it serves. */
export async function startSpareApiserver(plane: SpareApiserverPlane): Promise<SpareApiserver> {
  const name = `kube-apiserver-spare-${String(++spares)}`;
  const port = await freePort();
  const server = `https://${plane.apiserver.address}:${String(port)}`;
  const options: ApiserverOptions = {
    ...plane.apiserver,
    port,
    name,
    // The `kubernetes` Service keeps naming the plane's own API server, which never goes away.
    extraArgs: [...plane.apiserver.extraArgs, '--endpoint-reconciler-type=none'],
  };
  let current: ChildProcess | undefined;
  const start = async () => {
    const started = startApiserver(options);
    current = started.process;
    plane.procs.push(current);
    await waitForApiserver(server, plane.caFile, plane.adminToken, plane);
    return started.auditLog;
  };
  const stop = async () => {
    const p = current;
    if (!p) return;
    current = undefined;
    // Out of the plane's processes first: a wait of the plane's fails when one of them exits.
    plane.procs.splice(plane.procs.indexOf(p), 1);
    await stopProcess(p);
  };
  const auditLog = await start();
  const kubeconfig = writeKubeconfig(
    path.join(path.dirname(plane.kubeconfig), `${name}.kubeconfig`),
    server,
    plane.caFile,
    'opkit-admin',
    plane.adminToken,
  );
  return {
    server,
    kubeconfig,
    ...(auditLog ? { auditLog } : {}),
    restart: async () => {
      await stop();
      await start();
    },
    stop,
  };
}
