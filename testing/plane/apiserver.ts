/** kube-apiserver on loopback: RBAC, bearer tokens, every call out through the egress proxy. */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { probe, startProcess, waitFor } from './process';

export interface ApiserverOptions {
  readonly bin: string;
  /** The address it listens on and advertises (the `kubernetes` Service's endpoint). */
  readonly address: string;
  readonly port: number;
  readonly etcdUrl: string;
  /** Holds the PKI and `tokens.csv` (pki.ts). */
  readonly certs: string;
  readonly logs: string;
  /** The egress selector configuration that sends webhook and Service calls to the proxy. */
  readonly egressConfigFile: string;
  /** Record write requests in `<logs>/<name's audit>.log`. */
  readonly audit: boolean;
  readonly extraArgs: readonly string[];
  /**
   * Names its log, `<logs>/<name>.log`, and its audit log: `kube-apiserver` (the audit log
   * `audit.log`) for the plane's own, another for a spare beside it. @default 'kube-apiserver'
   */
  readonly name?: string;
}

/** Starts kube-apiserver, with its audit log when asked for; `waitForApiserver` waits until it serves. */
export function startApiserver(o: ApiserverOptions): { process: ChildProcess; auditLog?: string } {
  const name = o.name ?? 'kube-apiserver';
  const auditLog = o.audit
    ? path.join(o.logs, name === 'kube-apiserver' ? 'audit.log' : `${name}-audit.log`)
    : undefined;
  const args = [
    `--etcd-servers=${o.etcdUrl}`,
    `--bind-address=${o.address}`,
    `--advertise-address=${o.address}`,
    `--secure-port=${o.port}`,
    `--cert-dir=${o.certs}`,
    `--tls-cert-file=${path.join(o.certs, 'apiserver.crt')}`,
    `--tls-private-key-file=${path.join(o.certs, 'apiserver.key')}`,
    `--client-ca-file=${path.join(o.certs, 'ca.crt')}`,
    `--token-auth-file=${path.join(o.certs, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${path.join(o.certs, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(o.certs, 'sa.key')}`,
    // A range routable off this machine: the egress proxy makes sure nothing is ever dialled there.
    '--service-cluster-ip-range=10.0.0.0/24',
    `--egress-selector-config-file=${o.egressConfigFile}`,
    '--allow-privileged=false',
    ...(auditLog ? auditArgs(o.certs, auditLog) : []),
    '--v=1',
    ...o.extraArgs,
  ];
  return { process: startProcess(o.bin, args, path.join(o.logs, `${name}.log`)), auditLog };
}

/** Waits until `/readyz` answers 200 to the admin. */
export async function waitForApiserver(
  server: string,
  caFile: string,
  adminToken: string,
  plane: { readonly procs: ChildProcess[]; readonly logs: string },
): Promise<void> {
  const ca = fs.readFileSync(caFile);
  await waitFor(
    'kube-apiserver',
    async () => (await probe(`${server}/readyz`, ca, adminToken)) === 200,
    plane.procs,
    90_000,
    plane.logs,
  );
}

const AUDIT_POLICY = [
  'apiVersion: audit.k8s.io/v1',
  'kind: Policy',
  'omitStages: ["RequestReceived"]',
  'rules:',
  '- level: Metadata',
  '  verbs: ["create", "update", "patch", "delete", "deletecollection"]',
  '- level: None',
  '',
].join('\n');

/**
 * A policy recording the metadata of every write, and the flags that keep the whole log. The
 * plane's API servers share the policy file, and spare ones start while others read it: it is
 * written once, whole (a file of its own renamed into place), never again — rewritten at each
 * start, a server reading it mid-write found no kind in it and exited.
 */
export function auditArgs(certs: string, auditLog: string): string[] {
  const policy = path.join(certs, 'audit-policy.yaml');
  if (!fs.existsSync(policy)) {
    const whole = `${policy}.${String(process.pid)}.tmp`;
    fs.writeFileSync(whole, AUDIT_POLICY);
    fs.renameSync(whole, policy);
  }
  return [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${auditLog}`,
    '--audit-log-mode=blocking',
    '--audit-log-format=json',
    // Never rotated: at the default (100 MB, lumberjack's) a run of 10,000 resources
    // rotated the log, and everything counted from an offset in it read as 0 writes.
    '--audit-log-maxsize=1000000',
  ];
}
