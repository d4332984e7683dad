import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { TLSSocket } from 'node:tls';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { HttpKubeClient } from '../../../../operator/runtime/client/client';
import { type ClusterConfig, loadKubeConfig } from '../../../../operator/runtime/client/kubeconfig';
import { selfSignedCertificate } from '../../../../operator/runtime/webhooks/self-signed';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-kubeconfig-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** The options a request would carry. */
async function applied(config: ClusterConfig): Promise<https.RequestOptions> {
  const options: https.RequestOptions = { headers: { Accept: 'application/json' } };
  await config.applyToHTTPSOptions(options);
  return options;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

const twoContexts = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev
  cluster:
    server: https://dev.example:6443
    certificate-authority: certs/ca.crt
- name: prod
  cluster:
    server: https://prod.example
    certificate-authority-data: ${b64('PROD CA')}
    tls-server-name: api.prod.internal
users:
- name: dev-user
  user:
    token: dev-token
- name: prod-user
  user:
    client-certificate-data: ${b64('PROD CERT')}
    client-key-data: ${b64('PROD KEY')}
contexts:
- name: dev
  context: { cluster: dev, user: dev-user, namespace: team-a }
- name: prod
  context: { cluster: prod, user: prod-user }
`;

test('the current context: its server, its CA file (relative to the kubeconfig) and its bearer token', async () => {
  write('certs/ca.crt', 'DEV CA');
  const config = loadKubeConfig({ path: write('config', twoContexts) });
  expect(config.getCurrentCluster()).toEqual({ server: 'https://dev.example:6443' });
  expect(config.namespace).toBe('team-a');
  const options = await applied(config);
  expect(options.ca?.toString()).toBe('DEV CA');
  expect(options.headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer dev-token' });
  expect(options.cert).toBeUndefined();
});

test('a named context: inline CA, client certificate and key, TLS server name', async () => {
  const config = loadKubeConfig({ path: write('config', twoContexts), context: 'prod' });
  expect(config.server).toBe('https://prod.example');
  const options = await applied(config);
  expect([options.ca, options.cert, options.key].map((b) => (Buffer.isBuffer(b) ? b.toString() : b))).toEqual([
    'PROD CA',
    'PROD CERT',
    'PROD KEY',
  ]);
  expect(options.servername).toBe('api.prod.internal');
  expect(options.headers).toEqual({ Accept: 'application/json' });
});

test('insecure-skip-tls-verify turns certificate checks off; basic auth is sent as such', async () => {
  const config = loadKubeConfig({
    path: write(
      'config',
      `
current-context: c
clusters: [{ name: c, cluster: { server: 'https://10.0.0.1', insecure-skip-tls-verify: true } }]
users: [{ name: u, user: { username: admin, password: s3cret } }]
contexts: [{ name: c, context: { cluster: c, user: u } }]
`,
    ),
  });
  const options = await applied(config);
  expect(options.rejectUnauthorized).toBe(false);
  expect(options.headers).toMatchObject({ Authorization: `Basic ${b64('admin:s3cret')}` });
});

test('KUBECONFIG lists files that are merged: the first to set a name or the current context wins', async () => {
  const first = write(
    'a.yaml',
    `
current-context: mine
clusters: [{ name: shared, cluster: { server: 'https://first' } }]
contexts: [{ name: mine, context: { cluster: shared, user: me } }]
`,
  );
  const second = write(
    'b.yaml',
    `
current-context: other
clusters: [{ name: shared, cluster: { server: 'https://second' } }]
users: [{ name: me, user: { token: from-second } }]
`,
  );
  const config = loadKubeConfig({
    env: { KUBECONFIG: [first, path.join(dir, 'missing.yaml'), second].join(path.delimiter) },
  });
  expect(config.server).toBe('https://first');
  expect((await applied(config)).headers).toMatchObject({ Authorization: 'Bearer from-second' });
});

test("controller-runtime's order: --kubeconfig, KUBECONFIG, in-cluster, ~/.kube/config; with nothing at all, an error that says what to do", () => {
  const home = twoContexts.replace('certificate-authority: certs/ca.crt', 'insecure-skip-tls-verify: true');
  write('home/.kube/config', home);
  write('sa/ca.crt', 'CA');
  const fromEnv = write('env.yaml', home.replace('https://dev.example:6443', 'https://from-env'));
  const explicit = write('explicit.yaml', home.replace('https://dev.example:6443', 'https://explicit'));
  const env = { HOME: path.join(dir, 'home'), KUBECONFIG: fromEnv, KUBERNETES_SERVICE_HOST: '10.0.0.1' };
  const serviceAccountDir = path.join(dir, 'sa');
  expect(loadKubeConfig({ env, serviceAccountDir, path: explicit }).server).toBe('https://explicit');
  expect(loadKubeConfig({ env, serviceAccountDir }).server).toBe('https://from-env');
  expect(loadKubeConfig({ env: { ...env, KUBECONFIG: '' }, serviceAccountDir }).server).toBe('https://10.0.0.1:443');
  expect(loadKubeConfig({ env: { HOME: path.join(dir, 'home') } }).server).toBe('https://dev.example:6443');
  expect(() => loadKubeConfig({ env: { HOME: path.join(dir, 'nobody') } })).toThrow(
    /pass --kubeconfig, set KUBECONFIG/,
  );
});

test('mistakes in a kubeconfig are named', () => {
  const cases: [string, RegExp][] = [
    ['clusters: []', /no current-context is set/],
    ['current-context: x', /no context named "x"/],
    [
      'current-context: x\ncontexts: [{ name: x, context: { cluster: gone, user: u } }]',
      /names cluster "gone", which is not defined/,
    ],
    [
      'current-context: x\nclusters: [{ name: c, cluster: { server: https://s } }]\ncontexts: [{ name: x, context: { cluster: c, user: gone } }]',
      /names user "gone", which is not defined/,
    ],
    [
      'current-context: x\nclusters: [{ name: c, cluster: { server: https://s, certificate-authority: nope.crt } }]\ncontexts: [{ name: x, context: { cluster: c } }]',
      /certificate-authority: cannot read .*nope\.crt: ENOENT/,
    ],
    [
      'current-context: x\nclusters: [{ name: c, cluster: { server: https://s } }]\nusers: [{ name: u, user: { client-certificate-data: QQ== } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]',
      /needs both a certificate and a key/,
    ],
    [
      'current-context: x\nclusters: [{ name: c, cluster: { server: https://s } }]\nusers: [{ name: u, user: { auth-provider: { name: gcp } } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]',
      /auth-provider "gcp" is not supported.*exec credential plugin/,
    ],
    [
      'current-context: x\nclusters: [{ name: c, cluster: { server: https://s } }]\nusers: [{ name: u, user: { exec: { command: x, apiVersion: client.authentication.k8s.io/v1alpha1 } } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]',
      /apiVersion "client.authentication.k8s.io\/v1alpha1" is not supported/,
    ],
    ['current-context: [unclosed', /kubeconfig .*config/],
  ];
  for (const [text, message] of cases) expect(() => loadKubeConfig({ path: write('config', text) })).toThrow(message);
});

test("in a pod: the service account's CA and token, and the token is read again after it rotates", async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  try {
    write('sa/ca.crt', 'CLUSTER CA');
    write('sa/token', 'first\n');
    const config = loadKubeConfig({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: path.join(dir, 'sa'),
    });
    expect(config.server).toBe('https://[fd00::1]:443');
    expect((await applied(config)).ca?.toString()).toBe('CLUSTER CA');
    write('sa/token', 'second\n');
    // Within a minute the token read is reused (no file read per request) ...
    expect((await applied(config)).headers).toMatchObject({ Authorization: 'Bearer first' });
    jest.advanceTimersByTime(61_000);
    // ... after it, the rotated token is used.
    expect((await applied(config)).headers).toMatchObject({ Authorization: 'Bearer second' });
    // A token file missing mid-rotation keeps the last good token.
    fs.rmSync(path.join(dir, 'sa/token'));
    jest.advanceTimersByTime(61_000);
    expect((await applied(config)).headers).toMatchObject({ Authorization: 'Bearer second' });
  } finally {
    jest.useRealTimers();
  }
});

describe('exec credential plugins', () => {
  /** A plugin that logs each run and prints a token that expires `ttlS` seconds from now. */
  function plugin(ttlS: number | undefined): string {
    return write(
      'bin/cred-plugin',
      `#!/usr/bin/env node
const fs = require('fs');
fs.appendFileSync(${JSON.stringify(path.join(dir, 'runs.log'))}, JSON.stringify({ info: JSON.parse(process.env.KUBERNETES_EXEC_INFO), arg: process.argv[2], extra: process.env.EXTRA }) + '\\n');
const runs = fs.readFileSync(${JSON.stringify(path.join(dir, 'runs.log'))}, 'utf8').trim().split('\\n').length;
const status = { token: 'exec-token-' + runs };
${ttlS === undefined ? '' : `status.expirationTimestamp = new Date(Date.now() + ${ttlS} * 1000).toISOString();`}
process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }));
`,
    );
  }
  const runs = () =>
    fs
      .readFileSync(path.join(dir, 'runs.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  const kubeconfigWith = (command: string) =>
    write(
      'config',
      `
current-context: c
clusters: [{ name: c, cluster: { server: 'https://s' } }]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${command}
      args: [--cluster=c]
      env: [{ name: EXTRA, value: from-kubeconfig }]
      installHint: install cred-plugin from example.com
contexts: [{ name: c, context: { cluster: c, user: u } }]
`,
    );

  test('runs the plugin once for concurrent requests, with the exec info, args and env; again when the token is about to expire', async () => {
    fs.chmodSync(plugin(20), 0o755);
    const config = loadKubeConfig({ path: kubeconfigWith('./bin/cred-plugin') });
    const [a, b] = await Promise.all([applied(config), applied(config)]);
    expect(a.headers).toMatchObject({ Authorization: 'Bearer exec-token-1' });
    expect(b.headers).toMatchObject({ Authorization: 'Bearer exec-token-1' });
    expect(runs()).toEqual([
      {
        info: { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { interactive: false } },
        arg: '--cluster=c',
        extra: 'from-kubeconfig',
      },
    ]);
    // 20 s of validity is inside the 30 s renewal margin: the next request runs the plugin again.
    expect((await applied(config)).headers).toMatchObject({ Authorization: 'Bearer exec-token-2' });
  });

  test('a token without an expiry is kept', async () => {
    fs.chmodSync(plugin(undefined), 0o755);
    const config = loadKubeConfig({ path: kubeconfigWith('./bin/cred-plugin') });
    await applied(config);
    expect((await applied(config)).headers).toMatchObject({ Authorization: 'Bearer exec-token-1' });
    expect(runs()).toHaveLength(1);
  });

  test('a missing plugin fails the request with the install hint', async () => {
    const config = loadKubeConfig({ path: kubeconfigWith('./bin/not-installed') });
    await expect(applied(config)).rejects.toThrow(
      /exec credential plugin \.\/bin\/not-installed failed[\s\S]*install cred-plugin from example\.com/,
    );
  });
});

test("against a TLS server that asks for a client certificate: the certificate is presented and the server verified by name (with client-node's KubeConfig too)", async () => {
  const serverCert = selfSignedCertificate('api', ['kubernetes.test']);
  const clientCert = selfSignedCertificate('operator', ['operator']);
  const server = https.createServer({ ...serverCert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const peer = req.socket instanceof TLSSocket ? req.socket.getPeerCertificate() : undefined;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: { name: peer?.subject.CN ?? 'none' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as AddressInfo;
    write('client.crt', clientCert.cert);
    write('client.key', clientCert.key);
    const kubeconfig = write(
      'config',
      `
current-context: c
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:${port}', certificate-authority-data: ${b64(serverCert.cert)}, tls-server-name: kubernetes.test } }]
users: [{ name: u, user: { client-certificate: client.crt, client-key: client.key } }]
contexts: [{ name: c, context: { cluster: c, user: u } }]
`,
    );
    const client = new HttpKubeClient(loadKubeConfig({ path: kubeconfig }), { fieldManager: 'test' });
    try {
      const answer = await client.request<{ metadata: { name: string } }>('GET', '/version');
      expect(answer.metadata.name).toBe('operator');
    } finally {
      client.close();
    }
    // client-node's KubeConfig, which KubeClient accepts as well (client-node is ESM-only, which
    // this Jest project cannot load, so it runs in a child process).
    const script = `
      import { KubeConfig } from '@kubernetes/client-node';
      import clientModule from ${JSON.stringify(path.resolve(__dirname, '../../../../operator/runtime/client/client.ts'))};
      const { HttpKubeClient } = clientModule;
      const kc = new KubeConfig();
      kc.loadFromFile(${JSON.stringify(kubeconfig)});
      const client = new HttpKubeClient(kc, { fieldManager: 'test' });
      const answer = await client.request('GET', '/version');
      client.close();
      process.stdout.write(answer.metadata.name);`;
    const viaClientNode = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: path.resolve(__dirname, '../../../..') },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`${err.message}\n${stderr}`));
          else resolve(stdout);
        },
      ),
    );
    expect(viaClientNode).toBe('operator');
  } finally {
    server.close();
  }
}, 30_000);
