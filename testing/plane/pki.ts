/**
 * The plane's credentials: a CA, the API server's serving certificate for loopback, the
 * service-account key pair, a bearer token per component, and kubeconfigs that carry them.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The real node's name (testing/node/real-node.ts), which its kubelet's user carries. */
export const REAL_NODE_NAME = 'opkit-node';

function openssl(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A CA, an apiserver serving certificate for loopback (and `extraIps`, e.g. a real node's bridge
 * address the API server also listens on), and the service-account key pair.
 */
export function generateCertificates(dir: string, extraIps: readonly string[] = []): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=opkit-test-ca',
  ]);
  const names = ['IP:127.0.0.1', 'IP:10.0.0.1', ...extraIps.map((ip) => `IP:${ip}`), 'DNS:localhost'];
  const services = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc'].map((n) => `DNS:${n}`);
  signedCertificate(dir, 'apiserver', 'kube-apiserver', [
    'serverAuth',
    `subjectAltName=${[...names, ...services].join(',')}`,
  ]);
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
}

/**
 * A client certificate signed by the plane's CA, `<name>.crt` and `<name>.key` in `dir`, for user
 * `cn` (e.g. the API server's identity towards a real node's kubelet).
 */
export function generateClientCertificate(dir: string, name: string, cn: string): void {
  signedCertificate(dir, name, cn, ['clientAuth']);
}

/**
 * A key and a certificate signed by the plane's CA, `<name>.key` and `<name>.crt` in `dir`, for
 * `cn`: `use[0]` its extended key usage (serverAuth, clientAuth), the rest more extension lines.
 */
function signedCertificate(dir: string, name: string, cn: string, use: readonly [string, ...string[]]): void {
  const [usage, ...more] = use;
  const lines = ['basicConstraints=CA:FALSE', 'keyUsage=digitalSignature,keyEncipherment', `extendedKeyUsage=${usage}`];
  fs.writeFileSync(path.join(dir, `${name}.ext`), [...lines, ...more].join('\n'));
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${cn}`,
  ]);
  const ca = ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'];
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    ...ca,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

/** A kubeconfig for one user with a bearer token. */
export function kubeconfigYaml(server: string, caFile: string, user: string, token: string): string {
  const ca = fs.readFileSync(caFile).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: opkit-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${ca}`,
    'users:',
    `- name: ${user}`,
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: opkit-test',
    '  context:',
    '    cluster: opkit-test',
    `    user: ${user}`,
    'current-context: opkit-test',
    '',
  ].join('\n');
}

/** A bearer token per component, each its own user. */
export interface PlaneTokens {
  readonly admin: string;
  readonly controllerManager: string;
  readonly scheduler: string;
  readonly kwok: string;
  /** A real node's kubelet: user `system:node:<node>` in group `system:nodes`. */
  readonly node: string;
  /** A real node's kube-proxy: user `system:kube-proxy`, which the bootstrap RBAC grants what it needs. */
  readonly proxy: string;
}

/** Makes the tokens and writes the API server's token file (`tokens.csv` in `dir`). */
export function writeTokens(dir: string): PlaneTokens {
  const tokens: PlaneTokens = {
    admin: randomBytes(24).toString('hex'),
    controllerManager: randomBytes(24).toString('hex'),
    scheduler: randomBytes(24).toString('hex'),
    kwok: randomBytes(24).toString('hex'),
    node: randomBytes(24).toString('hex'),
    proxy: randomBytes(24).toString('hex'),
  };
  fs.writeFileSync(
    path.join(dir, 'tokens.csv'),
    [
      `${tokens.admin},opkit-admin,opkit-admin,"system:masters"`,
      // All controllers share one identity here (no per-controller service accounts), so it needs
      // the rights of every controller: give it the masters group.
      `${tokens.controllerManager},system:kube-controller-manager,system:kube-controller-manager,"system:masters"`,
      // The scheduler's own user, which the API server's bootstrap RBAC already grants what it needs.
      `${tokens.scheduler},system:kube-scheduler,system:kube-scheduler`,
      // kwok gets the rights of a kubelet and a volume provisioner (nodes.ts).
      `${tokens.kwok},opkit-kwok,opkit-kwok`,
      `${tokens.node},system:node:${REAL_NODE_NAME},system:node:${REAL_NODE_NAME},"system:nodes"`,
      `${tokens.proxy},system:kube-proxy,system:kube-proxy`,
    ].join('\n') + '\n',
  );
  return tokens;
}

/** Writes a kubeconfig for one component's user, readable only by its owner. */
export function writeKubeconfig(file: string, server: string, caFile: string, user: string, token: string): string {
  fs.writeFileSync(file, kubeconfigYaml(server, caFile, user, token), { mode: 0o600 });
  return file;
}

/** A component's own kubeconfig, `<certs>/<user>.kubeconfig`: its user and token, the plane's CA. */
export function componentKubeconfig(certs: string, server: string, user: string, token: string): string {
  return writeKubeconfig(path.join(certs, `${user}.kubeconfig`), server, path.join(certs, 'ca.crt'), user, token);
}

/**
 * What kube-controller-manager and kube-scheduler both take: their kubeconfig for the API server
 * and for checking who calls them, a health port on loopback, and no leader election (one of each).
 */
export function componentServingArgs(kubeconfig: string, port: number): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
  ];
}
