/**
 * `kubectl get <type> [name] [-n ns | -A] [-l selector] [--field-selector f] -o json`, answered by reading the API
 * directly: the same objects kubectl would print, without a kubectl process per poll (the suite
 * polls a few thousand times; a kubectl start costs ~75 ms of CPU, a read on a kept connection
 * ~1 ms). Anything this does not resolve exactly as kubectl does — another flag, a type the
 * server does not serve, a kubeconfig it cannot read — returns undefined, and the caller runs the
 * real kubectl.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { getSync, requestAsync, requestSync, type SyncRequest, type SyncResponse } from './sync-http';

interface Credentials {
  readonly server: string;
  readonly namespace: string;
  readonly auth: Omit<SyncRequest, 'url'>;
}

interface ApiResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  /** The names kubectl takes for it, lower-case, in the order it tries them (see resolveType). */
  readonly names: { readonly resource: readonly string[]; readonly short: readonly string[]; readonly kind: string };
  readonly namespaced: boolean;
  /** Whether this is its group's preferred version (the one discovery lists first). */
  readonly preferred: boolean;
}

interface GetRequest {
  readonly type: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly allNamespaces: boolean;
  readonly selector?: string;
  readonly fieldSelector?: string;
}

export interface ApiGetResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The answer to `kubectl get … -o json` (`args` without the `-o json`), or undefined to run kubectl. */
export function apiGet(args: readonly string[], kubeconfig: string): ApiGetResult | undefined {
  const request = parseGet(args);
  const creds = request && credentials(kubeconfig);
  if (!request || !creds) return undefined;
  const type = resolveType(request.type, kubeconfig, creds);
  if (!type) return undefined;
  const namespace = type.namespaced && !request.allNamespaces ? (request.namespace ?? creds.namespace) : undefined;
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const where = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const named = request.name ? `/${encodeURIComponent(request.name)}` : '';
  const query = new URLSearchParams({
    ...(request.selector ? { labelSelector: request.selector } : {}),
    ...(request.fieldSelector ? { fieldSelector: request.fieldSelector } : {}),
  }).toString();
  const answer = getSync({
    ...creds.auth,
    url: `${creds.server}${base}${where}/${type.resource}${named}${query ? `?${query}` : ''}`,
  });
  if (answer.status !== 200) return { code: 1, stdout: '', stderr: refusalMessage(answer) };
  if (request.name) return { code: 0, stdout: answer.body, stderr: '' };
  return { code: 0, stdout: JSON.stringify(asKubectlList(JSON.parse(answer.body), type)), stderr: '' };
}

/** A request to the API server: a path from its root, e.g. `/api/v1/namespaces`, and a JSON body. */
interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

/** `request` as the kubeconfig's user sends it; undefined when the kubeconfig is not one this reads. */
function asUser(kubeconfig: string, request: ApiRequest): SyncRequest | undefined {
  const creds = credentials(kubeconfig);
  return (
    creds && {
      ...creds.auth,
      url: `${creds.server}${request.path}`,
      method: request.method,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    }
  );
}

/**
 * One request to the API server as the kubeconfig's user, for a test helper that would otherwise
 * start a kubectl to make it; undefined when the kubeconfig is not one this reads (the helper then
 * runs kubectl).
 */
export function apiRequest(kubeconfig: string, request: ApiRequest): SyncResponse | undefined {
  const sent = asUser(kubeconfig, request);
  return sent && requestSync(sent);
}

/** apiRequest, answered without blocking this thread (requestAsync). */
export function apiRequestAsync(kubeconfig: string, request: ApiRequest): Promise<SyncResponse> | undefined {
  const sent = asUser(kubeconfig, request);
  return sent && requestAsync(sent);
}

/** A served type, as api-get resolves it: where its objects live and whether they are namespaced. */
export interface ServedType {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespaced: boolean;
}

/**
 * The type serving objects of `apiVersion` and `kind` (discovery read again once when none does:
 * a CRD just made), with the kubeconfig's namespace; undefined when the kubeconfig is not one this
 * reads or no served type matches.
 */
export function servedKind(
  kubeconfig: string,
  apiVersion: string,
  kind: string,
): { type: ServedType; namespace: string } | undefined {
  const creds = credentials(kubeconfig);
  if (!creds) return undefined;
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const type = inDiscovery(kubeconfig, creds, (types) =>
    types.find((t) => t.group === group && t.version === version && t.kind === kind && !t.resource.includes('/')),
  );
  return type && { type, namespace: creds.namespace };
}

/** kubectl prints a list as a `List`, each item with its apiVersion and kind. */
function asKubectlList(list: { items?: Record<string, unknown>[] }, type: ApiResource): unknown {
  const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
  return {
    apiVersion: 'v1',
    kind: 'List',
    metadata: { resourceVersion: '' },
    items: (list.items ?? []).map((item) => ({ apiVersion, kind: type.kind, ...item })),
  };
}

/** What kubectl prints for a request the API server refused (or that got no answer). */
export function refusalMessage(answer: SyncResponse): string {
  if (answer.error) return `Unable to connect to the server: ${answer.error}`;
  try {
    const status = JSON.parse(answer.body) as { reason?: string; message?: string };
    return `Error from server (${status.reason ?? answer.status}): ${status.message ?? answer.body}`;
  } catch {
    return `Error from server (${answer.status}): ${answer.body}`;
  }
}

/** The forms the tests use; undefined for any other flag (kubectl then answers). */
function parseGet(args: readonly string[]): GetRequest | undefined {
  if (args[0] !== 'get' || !args[1] || args[1].startsWith('-') || /[,/]/.test(args[1])) return undefined;
  const positional: string[] = [];
  const flags: { namespace?: string; selector?: string; fieldSelector?: string; allNamespaces: boolean } = {
    allNamespaces: false,
  };
  for (let i = 2; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (flag === '-A' || flag === '--all-namespaces') flags.allNamespaces = true;
    else if (flag === '-n' || flag === '--namespace') flags.namespace = inline ?? args[++i];
    else if (flag === '-l' || flag === '--selector') flags.selector = inline ?? args[++i];
    else if (flag === '--field-selector') flags.fieldSelector = inline ?? args[++i];
    else if (flag === '-ojson' || ((flag === '-o' || flag === '--output') && (inline ?? args[++i]) === 'json'))
      continue; // what this answers anyway
    else if (arg.startsWith('-')) return undefined;
    else positional.push(arg);
  }
  if (positional.length > 1 || (positional.length === 1 && flags.allNamespaces)) return undefined;
  return { type: args[1], name: positional[0], ...flags };
}

const credentialCache = new Map<string, { mtimeMs: number; creds: Credentials | undefined }>();

/** The server and client credentials of the kubeconfig's current context; undefined for an exec plugin and the like. */
function credentials(kubeconfig: string): Credentials | undefined {
  const mtimeMs = fs.statSync(kubeconfig).mtimeMs;
  const cached = credentialCache.get(kubeconfig);
  if (cached?.mtimeMs === mtimeMs) return cached.creds;
  const creds = readCredentials(kubeconfig);
  credentialCache.set(kubeconfig, { mtimeMs, creds });
  return creds;
}

type Named<T> = { name: string } & T;

function readCredentials(kubeconfig: string): Credentials | undefined {
  const config = parseYaml(fs.readFileSync(kubeconfig, 'utf8')) as {
    'current-context'?: string;
    contexts?: Named<{ context: { cluster: string; user: string; namespace?: string } }>[];
    clusters?: Named<{ cluster: Record<string, string> }>[];
    users?: Named<{ user: Record<string, string> }>[];
  };
  const context = (config.contexts ?? []).find((c) => c.name === config['current-context'])?.context;
  const cluster = (config.clusters ?? []).find((c) => c.name === context?.cluster)?.cluster;
  const user = (config.users ?? []).find((u) => u.name === context?.user)?.user ?? {};
  if (!context || !cluster?.server?.startsWith('https://')) return undefined;
  const known = new Set(['client-certificate-data', 'client-key-data', 'client-certificate', 'client-key', 'token']);
  if (Object.keys(user).some((k) => !known.has(k))) return undefined;
  const dir = path.dirname(kubeconfig);
  const read = (data?: string, file?: string) =>
    data
      ? Buffer.from(data, 'base64').toString('utf8')
      : file
        ? fs.readFileSync(path.resolve(dir, file), 'utf8')
        : undefined;
  return {
    server: cluster.server.replace(/\/$/, ''),
    namespace: context.namespace ?? 'default',
    auth: {
      ca: read(cluster['certificate-authority-data'], cluster['certificate-authority']),
      cert: read(user['client-certificate-data'], user['client-certificate']),
      key: read(user['client-key-data'], user['client-key']),
      token: user.token,
    },
  };
}

const discoveryCache = new Map<string, readonly ApiResource[]>();

/** The names of a type kubectl tries, in its order. */
const NAME_ORDER: ((t: ApiResource) => readonly string[])[] = [
  (t) => t.names.resource,
  (t) => t.names.short,
  (t) => [t.names.kind],
];

/**
 * The type kubectl would pick for `name`: discovery read again once when nothing matches (a CRD
 * just made). kubectl takes a plural or singular resource name first, a short name only when no
 * resource is so named, and a kind only when neither is (a kind of another group may share the
 * singular name of the one meant).
 */
function resolveType(name: string, kubeconfig: string, creds: Credentials): ApiResource | undefined {
  const wanted = name.toLowerCase();
  return inDiscovery(kubeconfig, creds, (types) => {
    for (const namesOf of NAME_ORDER) {
      const matches = matchType(wanted, types, namesOf);
      if (matches.length) return pickType(matches);
    }
    return undefined;
  });
}

/**
 * What `find` finds among the served types: discovery as cached for the kubeconfig, read again
 * once when `find` finds nothing there (a CRD just made).
 */
function inDiscovery<T>(
  kubeconfig: string,
  creds: Credentials,
  find: (types: readonly ApiResource[]) => T | undefined,
): T | undefined {
  for (const fresh of [false, true]) {
    if (fresh || !discoveryCache.has(kubeconfig)) discoveryCache.set(kubeconfig, discover(creds));
    const found = find(discoveryCache.get(kubeconfig)!);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Every type `name` may mean by these of its names: `type`, `type.group` or `type.version.group`. */
function matchType(
  name: string,
  types: readonly ApiResource[],
  namesOf: (t: ApiResource) => readonly string[],
): ApiResource[] {
  const parts = name.split('.');
  return types.filter((t) => {
    if (!namesOf(t).includes(parts[0]!)) return false;
    if (parts.length === 1) return true;
    const rest = parts.slice(1).join('.');
    return rest === t.group || rest === `${t.version}.${t.group}`;
  });
}

/**
 * The type kubectl's RESTMapper picks among several: the first in discovery's order (the core
 * group first, then the groups as the server ranks them) served in its group's preferred version;
 * failing that, the first in any version.
 */
function pickType(matches: readonly ApiResource[]): ApiResource | undefined {
  return matches.find((m) => m.preferred) ?? matches[0];
}

interface DiscoveryResource {
  resource: string;
  responseKind?: { kind?: string };
  scope?: string;
  singularResource?: string;
  shortNames?: string[];
}

interface GroupDiscovery {
  metadata?: { name?: string };
  versions?: { version: string; resources?: DiscoveryResource[] }[];
}

/** Every served type, from aggregated discovery (two requests); empty when the server does not offer it. */
function discover(creds: Credentials): ApiResource[] {
  const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
  const types: ApiResource[] = [];
  for (const root of ['/api', '/apis']) {
    const answer = getSync({ ...creds.auth, url: `${creds.server}${root}`, accept });
    if (answer.status !== 200) return [];
    const list = JSON.parse(answer.body) as { kind?: string; items?: GroupDiscovery[] };
    if (list.kind !== 'APIGroupDiscoveryList') return [];
    for (const group of list.items ?? [])
      for (const [v, version] of (group.versions ?? []).entries())
        for (const r of version.resources ?? []) {
          const kind = r.responseKind?.kind ?? '';
          types.push({
            group: group.metadata?.name ?? '',
            version: version.version,
            resource: r.resource,
            kind,
            names: {
              resource: [r.resource, r.singularResource ?? ''].filter(Boolean),
              short: r.shortNames ?? [],
              kind: kind.toLowerCase(),
            },
            namespaced: r.scope === 'Namespaced',
            preferred: v === 0,
          });
        }
  }
  return types;
}
