/**
 * cert-manager for the tests: its certificate controllers with the CA and self-signed issuers,
 * built from its Go module by testing/build-cert-manager.sh (cached outside the repository;
 * .ci/run builds it before the tests), or the reason it cannot be. The tiers' global set-ups call
 * `provisionCertManager()`, so the build is part of the set-up, not of a test file's time.
 *
 * One cert-manager per test file, serving only that file's namespace: the control plane is shared
 * by the tier's files, and a cert-manager of one must not issue another's Certificates.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { goTool } from './go-tool';
import { kubectlOk, testKubeconfig } from './kube';

const CERT_MANAGER = goTool({
  script: 'testing/build-cert-manager.sh',
  env: 'OPKIT_TEST_CERT_MANAGER',
  what: 'cert-manager',
});

/** Builds (or finds cached) cert-manager and tells the test files through the environment. */
export function provisionCertManager(): void {
  CERT_MANAGER.provision();
}

/** The directory with cert-manager-controller and cert-manager's CRDs, or why there is none. */
export function certManagerBuild(): { dir?: string; missing?: string } {
  const { bin, missing } = CERT_MANAGER.binary();
  return bin ? { dir: bin } : { missing };
}

/** A running cert-manager serving one namespace. */
export interface RunningCertManager {
  /** What it logged. */
  readonly logs: string[];
  stop(): Promise<void>;
}

/**
 * Installs cert-manager's CRDs (cluster-wide: a second install changes nothing) and starts its
 * controllers for `namespace`, with the test plane's admin kubeconfig.
 */
export function startCertManager(namespace: string): RunningCertManager {
  const { dir, missing } = certManagerBuild();
  if (!dir) throw new Error(missing);
  kubectlOk(['apply', '--server-side', '-f', path.join(dir, 'crds')]);
  kubectlOk([
    'wait',
    '--for=condition=established',
    '--timeout=60s',
    ...fs
      .readdirSync(path.join(dir, 'crds'))
      .map((f) => `crd/${/^cert-manager\.io_(.+)\.yaml$/.exec(f)![1]}.cert-manager.io`),
  ]);
  const logs: string[] = [];
  const child: ChildProcess = spawn(
    path.join(dir, 'cert-manager-controller'),
    [`--kubeconfig=${testKubeconfig()}`, `--namespace=${namespace}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (b: Buffer) => logs.push(...b.toString().split('\n').filter(Boolean)));
  }
  return {
    logs,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => {
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * A CA in `namespace` that an Issuer of `name` signs with, as users set one up with cert-manager:
 * a self-signed Issuer makes the CA's key pair (a Certificate with isCA), and the CA Issuer signs
 * with it. Returns once the Issuer is Ready.
 */
export function caIssuer(namespace: string, name: string): void {
  const objects = [
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: `${name}-bootstrap`, namespace },
      spec: { selfSigned: {} },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: `${name}-root`, namespace },
      spec: {
        isCA: true,
        commonName: `${name} root`,
        secretName: `${name}-root`,
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { name: `${name}-bootstrap`, kind: 'Issuer' },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name, namespace },
      spec: { ca: { secretName: `${name}-root` } },
    },
  ];
  kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
  kubectlOk(['wait', '-n', namespace, '--for=condition=Ready', '--timeout=120s', `issuer/${name}`]);
}
