/**
 * Finds the API server and the credentials for it, as controller-runtime does: an explicit
 * kubeconfig file, $KUBECONFIG, the in-cluster service account, or ~/.kube/config.
 *
 * Why not `@kubernetes/client-node`'s KubeConfig: importing it loads that package's whole module
 * graph (generated API models, fetch polyfills, websockets, OpenTelemetry), about 25 MiB of a
 * reconciler's resident memory, for what is a YAML file and a few headers. `KubeClient` accepts
 * either, since both have the same two methods (`KubeConfigLike`).
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import type * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseJson, stringAt } from '../../../constructs/contract/json';

/** What `KubeClient` needs from a kubeconfig; client-node's `KubeConfig` has this shape too. */
export interface KubeConfigLike {
  /** The cluster requests go to, or null if there is none. */
  getCurrentCluster(): { readonly server: string } | null;
  /** Adds the CA, client certificate and Authorization header to a request's options. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

export interface LoadKubeConfigOptions {
  /** A kubeconfig file to use; when unset, the usual search below. @default the search: $KUBECONFIG, in-cluster, ~/.kube/config */
  readonly path?: string;
  /** The context to use instead of the file's current-context. @default the file's current-context */
  readonly context?: string;
  /** Environment to read KUBECONFIG, HOME and KUBERNETES_SERVICE_HOST/PORT from. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the service account is mounted in a pod. @default /var/run/secrets/kubernetes.io/serviceaccount */
  readonly serviceAccountDir?: string;
}

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Token files (projected service account tokens rotate) are read again after this long, as client-go does. */
const TOKEN_FILE_REFRESH_MS = 60_000;
/** An exec credential is renewed this long before it expires. */
const EXEC_EXPIRY_MARGIN_MS = 30_000;

/**
 * Loads cluster access in controller-runtime's order (`ctrl.GetConfig`):
 * 1. `path`, if given (the --kubeconfig flag);
 * 2. the files listed in $KUBECONFIG, merged (the first to define a name wins);
 * 3. in a pod (KUBERNETES_SERVICE_HOST is set): the mounted service account;
 * 4. ~/.kube/config.
 */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): ClusterConfig {
  const env = options.env ?? process.env;
  if (options.path) return ClusterConfig.fromFiles([options.path], options.context, env);
  const listed = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  if (listed.length) return ClusterConfig.fromFiles(listed, options.context, env);
  if (env.KUBERNETES_SERVICE_HOST)
    return ClusterConfig.inCluster(options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR, env);
  const home = path.join(env.HOME ?? os.homedir(), '.kube', 'config');
  if (fs.existsSync(home)) return ClusterConfig.fromFiles([home], options.context, env);
  throw new Error('no cluster to talk to: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod');
}

/** A kubeconfig `exec` credential plugin (client.authentication.k8s.io v1 or v1beta1). */
export interface ExecPlugin {
  readonly command: string;
  readonly args?: string[];
  readonly env?: { name: string; value: string }[];
  readonly apiVersion: string;
  readonly installHint?: string;
}

interface Credentials {
  /** The Authorization header's value: `Bearer <token>` or `Basic <user:password>`. */
  authorization?: string;
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Epoch ms after which these must be fetched again. */
  expiresAt?: number;
}

/** Where the bearer token or client certificate comes from. */
type CredentialSource =
  | { kind: 'static'; credentials: Credentials }
  | { kind: 'tokenFile'; file: string; cert?: Buffer; key?: Buffer }
  | { kind: 'exec'; plugin: ExecPlugin; baseDir: string; env: NodeJS.ProcessEnv };

/** One cluster and the credentials for it, resolved from a kubeconfig or a pod's service account. */
export class ClusterConfig implements KubeConfigLike {
  /** The service account mounted in a pod, with its token re-read as it rotates. */
  static inCluster(dir: string = SERVICE_ACCOUNT_DIR, env: NodeJS.ProcessEnv = process.env): ClusterConfig {
    const host = env.KUBERNETES_SERVICE_HOST;
    const port = env.KUBERNETES_SERVICE_PORT ?? '443';
    if (!host) throw new Error('not in a pod: KUBERNETES_SERVICE_HOST is not set');
    const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return new ClusterConfig(
      server,
      { ca: readFile(path.join(dir, 'ca.crt'), 'the in-cluster CA') },
      { kind: 'tokenFile', file: path.join(dir, 'token') },
    );
  }

  /** The current (or named) context of one or more kubeconfig files, merged as kubectl merges them. */
  static fromFiles(
    files: readonly string[],
    contextName: string | undefined,
    env: NodeJS.ProcessEnv = process.env,
  ): ClusterConfig {
    const merged = mergeKubeconfigs(files.filter((f) => files.length === 1 || fs.existsSync(f)));
    const where = files.join(path.delimiter);
    const name = contextName ?? merged.currentContext;
    if (!name) throw new Error(`kubeconfig ${where}: no current-context is set`);
    const context = merged.contexts.get(name);
    if (!context) throw new Error(`kubeconfig ${where}: no context named ${JSON.stringify(name)}`);
    const cluster = merged.clusters.get(context.value.cluster ?? '');
    if (!cluster)
      throw new Error(
        `kubeconfig ${where}: context ${JSON.stringify(name)} names cluster ${JSON.stringify(context.value.cluster)}, which is not defined`,
      );
    const user = context.value.user ? merged.users.get(context.value.user) : { value: {}, dir: cluster.dir };
    if (!user)
      throw new Error(
        `kubeconfig ${where}: context ${JSON.stringify(name)} names user ${JSON.stringify(context.value.user)}, which is not defined`,
      );
    return new ClusterConfig(
      requireServer(cluster.value, where),
      clusterTls(cluster.value, cluster.dir, where),
      userCredentials(user.value, user.dir, where, env),
      context.value.namespace,
    );
  }

  private credentials?: Credentials;
  private pending?: Promise<Credentials>;
  private fetchedAt = 0;

  private constructor(
    /** The API server's URL. */
    readonly server: string,
    private readonly tls: { ca?: Buffer; insecure?: boolean; serverName?: string },
    private readonly source: CredentialSource,
    /** The context's default namespace, if it sets one. */
    readonly namespace?: string,
  ) {}

  getCurrentCluster(): { readonly server: string } {
    return { server: this.server };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    if (this.tls.ca) options.ca = this.tls.ca;
    if (this.tls.insecure) options.rejectUnauthorized = false;
    if (this.tls.serverName) options.servername = this.tls.serverName;
    const c = await this.currentCredentials();
    if (c.cert) options.cert = c.cert;
    if (c.key) options.key = c.key;
    // The client passes headers as an object, never as a raw array.
    if (c.authorization)
      options.headers = { ...(options.headers as OutgoingHttpHeaders | undefined), Authorization: c.authorization };
  }

  /** Credentials, fetched again when a token file may have rotated or an exec credential expires. */
  private async currentCredentials(): Promise<Credentials> {
    const source = this.source;
    if (source.kind === 'static') return source.credentials;
    const now = Date.now();
    const cached = this.credentials;
    const fresh =
      cached &&
      (source.kind === 'tokenFile'
        ? now - this.fetchedAt < TOKEN_FILE_REFRESH_MS
        : cached.expiresAt === undefined || now < cached.expiresAt - EXEC_EXPIRY_MARGIN_MS);
    if (fresh) return cached;
    // Concurrent requests share one fetch (one plugin run, not one per request).
    this.pending ??= (
      source.kind === 'tokenFile'
        ? fs.promises
            .readFile(source.file, 'utf8')
            .then((t) => ({ authorization: `Bearer ${t.trim()}`, cert: source.cert, key: source.key }))
        : runExecPlugin(source.plugin, source.baseDir, source.env)
    )
      .then((c) => {
        this.credentials = c;
        this.fetchedAt = Date.now();
        return c;
      })
      .finally(() => {
        this.pending = undefined;
      });
    try {
      return await this.pending;
    } catch (err) {
      // A token file caught mid-rotation: keep the token we had (the API server still accepts it).
      if (this.credentials && source.kind === 'tokenFile') return this.credentials;
      throw err;
    }
  }
}

/** The fields of a kubeconfig this client reads, as YAML gives them (anything may be missing). */
interface KubeconfigCluster {
  server?: string;
  'proxy-url'?: string;
  'certificate-authority-data'?: string;
  'certificate-authority'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
}
interface KubeconfigUser {
  'auth-provider'?: { name?: string };
  exec?: Partial<ExecPlugin>;
  'client-certificate-data'?: string;
  'client-certificate'?: string;
  'client-key-data'?: string;
  'client-key'?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
}
interface KubeconfigContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}
interface KubeconfigFile {
  'current-context'?: string;
  clusters?: ({ name?: string; cluster?: KubeconfigCluster } | null)[];
  users?: ({ name?: string; user?: KubeconfigUser } | null)[];
  contexts?: ({ name?: string; context?: KubeconfigContext } | null)[];
}

interface Named<T> {
  value: T;
  dir: string;
}
interface Merged {
  currentContext?: string;
  clusters: Map<string, Named<KubeconfigCluster>>;
  users: Map<string, Named<KubeconfigUser>>;
  contexts: Map<string, Named<KubeconfigContext>>;
}

/** An exec plugin's answer, as JSON gives it. */

/** kubectl's merge: the first file to set current-context, or to define a name, wins. */
function mergeKubeconfigs(files: readonly string[]): Merged {
  const merged: Merged = { clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const file of files) {
    let doc: KubeconfigFile;
    try {
      doc = (parseYaml(fs.readFileSync(file, 'utf8')) as KubeconfigFile | null) ?? {};
    } catch (err) {
      throw new Error(`kubeconfig ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    // Relative paths in a kubeconfig are relative to the file that holds them.
    const dir = path.dirname(path.resolve(file));
    merged.currentContext ??= doc['current-context'] === '' ? undefined : doc['current-context'];
    addFirst(merged.clusters, doc.clusters, (e) => e.cluster, dir);
    addFirst(merged.users, doc.users, (e) => e.user, dir);
    addFirst(merged.contexts, doc.contexts, (e) => e.context, dir);
  }
  return merged;
}

/** Adds the named entries a map does not have yet: the first file to define a name wins. */
function addFirst<E extends { name?: string }, T>(
  map: Map<string, Named<T>>,
  entries: readonly (E | null)[] | undefined,
  value: (entry: E) => T | undefined,
  dir: string,
): void {
  for (const entry of entries ?? []) {
    if (entry?.name !== undefined && !map.has(entry.name))
      map.set(entry.name, { value: value(entry) ?? ({} as T), dir });
  }
}

function requireServer(cluster: KubeconfigCluster, where: string): string {
  if (!cluster.server) throw new Error(`kubeconfig ${where}: the cluster has no server`);
  if (cluster['proxy-url']) throw new Error(`kubeconfig ${where}: proxy-url is not supported by this client`);
  return cluster.server;
}

function clusterTls(
  cluster: KubeconfigCluster,
  dir: string,
  where: string,
): { ca?: Buffer; insecure?: boolean; serverName?: string } {
  const ca = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64')
    : cluster['certificate-authority']
      ? readFile(path.resolve(dir, cluster['certificate-authority']), `kubeconfig ${where}: certificate-authority`)
      : undefined;
  return { ca, insecure: cluster['insecure-skip-tls-verify'] === true, serverName: cluster['tls-server-name'] };
}

function userCredentials(user: KubeconfigUser, dir: string, where: string, env: NodeJS.ProcessEnv): CredentialSource {
  if (user['auth-provider']) {
    throw new Error(
      `kubeconfig ${where}: the auth-provider ${JSON.stringify(user['auth-provider'].name)} is not supported (kubectl removed them too); use an exec credential plugin such as the cloud's kubelogin`,
    );
  }
  if (user.exec) {
    const { command, apiVersion } = user.exec;
    if (!command) throw new Error(`kubeconfig ${where}: the exec plugin has no command`);
    if (!apiVersion || !/^client\.authentication\.k8s\.io\/(v1|v1beta1)$/.test(apiVersion)) {
      throw new Error(
        `kubeconfig ${where}: exec plugin apiVersion ${JSON.stringify(apiVersion)} is not supported (client.authentication.k8s.io/v1 or v1beta1)`,
      );
    }
    return { kind: 'exec', plugin: { ...user.exec, command, apiVersion }, baseDir: dir, env };
  }
  const pick = (data: string | undefined, file: string | undefined, what: string) =>
    data
      ? Buffer.from(data, 'base64')
      : file
        ? readFile(path.resolve(dir, file), `kubeconfig ${where}: ${what}`)
        : undefined;
  const cert = pick(user['client-certificate-data'], user['client-certificate'], 'client-certificate');
  const key = pick(user['client-key-data'], user['client-key'], 'client-key');
  if (!!cert !== !!key) throw new Error(`kubeconfig ${where}: a client certificate needs both a certificate and a key`);
  if (user.tokenFile && !user.token) return { kind: 'tokenFile', file: path.resolve(dir, user.tokenFile), cert, key };
  let authorization: string | undefined;
  if (user.token) authorization = `Bearer ${user.token}`;
  // Basic auth is rare today, but kubectl still honours it.
  else if (user.username !== undefined)
    authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
  return { kind: 'static', credentials: { cert, key, authorization } };
}

function readFile(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`${what}: cannot read ${file}: ${errorCode(err) ?? String(err)}`, {
      cause: err,
    });
  }
}

/** Runs an exec credential plugin and reads its ExecCredential answer. */
function runExecPlugin(plugin: ExecPlugin, baseDir: string, env: NodeJS.ProcessEnv): Promise<Credentials> {
  // A command given as a relative path (with a slash) is relative to the kubeconfig's folder;
  // a bare name is looked up on PATH.
  const command =
    plugin.command.includes('/') && !path.isAbsolute(plugin.command)
      ? path.resolve(baseDir, plugin.command)
      : plugin.command;
  const execInfo = { apiVersion: plugin.apiVersion, kind: 'ExecCredential', spec: { interactive: false } };
  const childEnv: NodeJS.ProcessEnv = { ...env, KUBERNETES_EXEC_INFO: JSON.stringify(execInfo) };
  for (const e of plugin.env ?? []) childEnv[e.name] = e.value;
  return new Promise((resolve, reject) => {
    execFile(
      command,
      plugin.args ?? [],
      { env: childEnv, timeout: 60_000, maxBuffer: 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) {
          const hint = errorCode(err) === 'ENOENT' && plugin.installHint ? `\n${plugin.installHint}` : '';
          reject(
            new Error(
              `exec credential plugin ${plugin.command} failed: ${err.message}${stderr ? `: ${stderr.trim()}` : ''}${hint}`,
            ),
          );
          return;
        }
        let answer: unknown;
        try {
          answer = parseJson(stdout);
        } catch {
          reject(new Error(`exec credential plugin ${plugin.command} did not print an ExecCredential as JSON`));
          return;
        }
        const status = {
          token: stringAt(answer, 'status', 'token'),
          clientCertificateData: stringAt(answer, 'status', 'clientCertificateData'),
          clientKeyData: stringAt(answer, 'status', 'clientKeyData'),
          expirationTimestamp: stringAt(answer, 'status', 'expirationTimestamp'),
        };
        if (
          stringAt(answer, 'kind') !== 'ExecCredential' ||
          (!status.token && !(status.clientCertificateData && status.clientKeyData))
        ) {
          reject(
            new Error(`exec credential plugin ${plugin.command} printed no token and no client certificate in status`),
          );
          return;
        }
        resolve({
          authorization: status.token ? `Bearer ${status.token}` : undefined,
          cert: status.clientCertificateData,
          key: status.clientKeyData,
          expiresAt: status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : undefined,
        });
      },
    );
  });
}

/** A system error's code (ENOENT, EACCES), if it has one. */
function errorCode(err: unknown): string | undefined {
  // Not `instanceof Error`: an error thrown by Node itself may come from another realm (a test's sandbox).
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;
}
