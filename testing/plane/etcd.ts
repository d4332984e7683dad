/** etcd on loopback, one member, throwaway data. */
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { freePort } from '../free-port';
import { startProcess } from './process';

export interface RunningEtcd {
  /** The client URL. */
  readonly url: string;
  readonly process: ChildProcess;
}

/** Starts etcd with its data in `<workDir>/etcd-data` and its log in `<logs>/etcd.log`. */
export async function startEtcd(bin: string, workDir: string, logs: string): Promise<RunningEtcd> {
  const url = `http://127.0.0.1:${await freePort()}`;
  const peer = `http://127.0.0.1:${await freePort()}`;
  const args = [
    '--name',
    'default',
    '--data-dir',
    path.join(workDir, 'etcd-data'),
    '--listen-client-urls',
    url,
    '--advertise-client-urls',
    url,
    '--listen-peer-urls',
    peer,
    '--initial-advertise-peer-urls',
    peer,
    '--initial-cluster',
    `default=${peer}`,
    // Test data is throwaway: skipping fsync makes every write much cheaper.
    '--unsafe-no-fsync',
    '--log-level',
    'warn',
  ];
  return { url, process: startProcess(bin, args, path.join(logs, 'etcd.log')) };
}
