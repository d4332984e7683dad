/**
 * The local control plane's only way out: kube-apiserver sends its "cluster" egress (calls to
 * admission and conversion webhooks, aggregated APIs) through this HTTP CONNECT proxy on a Unix
 * socket (`--egress-selector-config-file`), and the proxy lets a connection through only when it
 * stays on this machine:
 *
 * - to a loopback address (a webhook registered by `url` on 127.0.0.1, as envtest does);
 * - to a Service the test routed to a local server (`route('<svc>.<ns>.svc:<port>', '127.0.0.1:<port>')`):
 *   the API server resolves a Service to its cluster IP, and the proxy maps that IP back to the
 *   Service by asking the API server;
 * - with a real node (testing/node), to the node's own network: its kubelet, and a Service whose
 *   endpoints are pods there (the API server calls the Service's cluster IP; the proxy dials a
 *   ready endpoint on the node's bridge, never the cluster IP itself);
 * - everything else is refused at once (403), and written to the log: the service CIDR the API
 *   server hands out (10.0.0.0/24 here) is routable off the machine, so a call to a Service
 *   nothing serves must fail fast and go nowhere, instead of reaching whatever host has that
 *   address on the user's network.
 *
 * Each decision is a JSON line in `egress.log`: `{ time, target, service?, decision, via? }`.
 *
 * The proxy runs in a process of its own: a test's synchronous calls (execFileSync('kubectl')) in
 * the process that started the control plane must not keep it from answering the API server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as path from 'node:path';
import { isJsonObject } from '../constructs/contract/json';
import { isLoopbackHost, addRoute, readRoutes, ROUTES_FILE } from '../operator/runtime/local';
import { type Cidr, inCidr, parseCidr, readyEndpoint, servicePortName } from './node/endpoints';

export { isLoopbackHost };

/** What the API server needs to reach the proxy, and where the proxy says what it did. */
export interface EgressProxy {
  /** The kube-apiserver flag's file (an EgressSelectorConfiguration). */
  readonly configFile: string;
  /** One JSON line per connection the API server asked for: target, decision. */
  readonly log: string;
  /**
   * Sends the API server's calls to a Service to a server on this machine from now on, e.g.
   * `route('memcached-webhook.memcached-system.svc:443', '127.0.0.1:40123')`.
   */
  readonly route: (service: string, target: string) => void;
  readonly process: ChildProcess;
}

/** How the proxy reads Services (to map a cluster IP back to its Service). */
export interface ApiAccess {
  readonly server: string;
  readonly caFile: string;
  readonly token: string;
}

/** One line of the log. */
export interface EgressDecision {
  readonly time: string;
  /** host:port the API server asked to connect to. */
  readonly target: string;
  /** `<svc>.<ns>.svc:<port>` when the target is a Service's cluster IP. */
  readonly service?: string;
  readonly decision: 'loopback' | 'routed' | 'node' | 'refused';
  /** Where a routed connection went. */
  readonly via?: string;
}

export interface EgressOptions {
  /** A real node's network (CIDR): its addresses may be reached, and Services with endpoints there. */
  readonly nodeNetwork?: string;
}

/** Starts the proxy's process in `dir`; resolves once it listens. */
export async function startEgressProxy(dir: string, api: ApiAccess, options: EgressOptions = {}): Promise<EgressProxy> {
  fs.mkdirSync(dir, { recursive: true });
  const socket = path.join(dir, 'egress.sock');
  const log = path.join(dir, 'egress.log');
  const routes = path.join(dir, ROUTES_FILE);
  fs.writeFileSync(routes, '{}\n');
  fs.writeFileSync(log, '');
  const configFile = path.join(dir, 'egress-selector.yaml');
  fs.writeFileSync(
    configFile,
    [
      'apiVersion: apiserver.k8s.io/v1beta1',
      'kind: EgressSelectorConfiguration',
      'egressSelections:',
      '- name: cluster',
      '  connection:',
      '    proxyProtocol: HTTPConnect',
      '    transport:',
      '      uds:',
      `        udsName: ${socket}`,
      '',
    ].join('\n'),
  );
  // From the compiled package the module is JavaScript; from this repository's sources, TypeScript.
  const entry = __filename.endsWith('.ts') ? ['--import', 'tsx', __filename] : [__filename];
  const child = spawn(process.execPath, [...entry, '--serve', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      OPKIT_EGRESS_API: JSON.stringify(api),
      OPKIT_EGRESS_NODE_NETWORK: options.nodeNetwork ?? '',
    },
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => {
      resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`the egress proxy exited (${String(code)}) before it listened on ${socket}`));
    });
  });
  return {
    configFile,
    log,
    process: child,
    route: (service, target) => {
      addEgressRoute(log, service, target);
    },
  };
}

/**
 * Routes a Service to a local server through the proxy whose log is `log` (ControlPlane.egress.log):
 * usable from any process, e.g. a test file in a jest worker.
 */
export function addEgressRoute(log: string, service: string, target: string): void {
  addRoute(path.join(path.dirname(log), ROUTES_FILE), service, target);
}

/** The decisions the proxy logged so far. */
export function egressDecisions(log: string): EgressDecision[] {
  return fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map(parseJson).filter(isEgressDecision);
}

/** Splits `host:port` (and `[v6]:port`). */
function splitTarget(target: string): { host: string; port: string } {
  const i = target.lastIndexOf(':');
  return { host: target.slice(0, i).replace(/^\[|\]$/g, ''), port: target.slice(i + 1) };
}

interface ServiceItem {
  metadata: { name: string; namespace: string };
  spec?: { clusterIP?: string; clusterIPs?: string[] };
}

/** The Services of a ServiceList: those with a name, a namespace and (maybe) cluster IPs. */
function serviceItems(list: unknown): ServiceItem[] {
  const items = isJsonObject(list) && Array.isArray(list.items) ? list.items : [];
  return items.flatMap((s: unknown) => {
    if (!isJsonObject(s) || !isJsonObject(s.metadata) || !isJsonObject(s.spec)) return [];
    const { name, namespace } = s.metadata;
    const { clusterIP, clusterIPs } = s.spec;
    if (typeof name !== 'string' || typeof namespace !== 'string') return [];
    return [
      {
        metadata: { name, namespace },
        spec: {
          clusterIP: typeof clusterIP === 'string' ? clusterIP : undefined,
          clusterIPs: Array.isArray(clusterIPs) ? clusterIPs.filter((i) => typeof i === 'string') : undefined,
        },
      },
    ];
  });
}

function parseJson(text: string): unknown {
  return JSON.parse(text);
}

function isEgressDecision(v: unknown): v is EgressDecision {
  return (
    isJsonObject(v) &&
    typeof v.time === 'string' &&
    typeof v.target === 'string' &&
    (v.decision === 'loopback' || v.decision === 'routed' || v.decision === 'node' || v.decision === 'refused')
  );
}

/** The API access the proxy process is given in its environment. */
function apiAccess(v: unknown): ApiAccess {
  if (isJsonObject(v) && typeof v.server === 'string' && typeof v.caFile === 'string' && typeof v.token === 'string')
    return { server: v.server, caFile: v.caFile, token: v.token };
  throw new Error('OPKIT_EGRESS_API: give {"server", "caFile", "token"} as JSON');
}

/** `<svc>.<ns>.svc` of the Service with this cluster IP, asked of the API server. */
async function serviceWithClusterIp(api: ApiAccess, ip: string): Promise<string | undefined> {
  const found = serviceItems(await apiGet(api, '/api/v1/services')).find(
    (s) => s.spec?.clusterIP === ip || s.spec?.clusterIPs?.includes(ip),
  );
  return found ? `${found.metadata.name}.${found.metadata.namespace}.svc` : undefined;
}

/** What to do with a CONNECT: let it through to loopback, route it to a local server, or refuse it (no `via`). */
async function decide(
  dir: string,
  api: ApiAccess,
  target: string,
  nodeNetwork: Cidr | undefined,
): Promise<Omit<EgressDecision, 'time'>> {
  const { host, port } = splitTarget(target);
  if (isLoopbackHost(host)) return { target, decision: 'loopback', via: target };
  if (nodeNetwork && inCidr(host, nodeNetwork)) return { target, decision: 'node', via: target };
  const service = host.endsWith('.svc') ? host : net.isIP(host) ? await serviceWithClusterIp(api, host) : undefined;
  const named = service ? `${service}:${port}` : undefined;
  const routes = readRoutes(path.join(dir, ROUTES_FILE));
  const via = named ? routes[named] : undefined;
  // A route only ever leads to this machine.
  if (via && isLoopbackHost(splitTarget(via).host)) return { target, service: named, decision: 'routed', via };
  if (service && nodeNetwork) {
    const endpoint = await serviceEndpoint(api, service, Number(port));
    if (endpoint && inCidr(splitTarget(endpoint).host, nodeNetwork))
      return { target, service: named, decision: 'node', via: endpoint };
  }
  return { target, ...(named ? { service: named } : {}), decision: 'refused' };
}

/** GET a path of the API server as the proxy's user; undefined on any failure. */
function apiGet(api: ApiAccess, urlPath: string): Promise<unknown> {
  return new Promise((resolve) => {
    const req = https.get(
      new URL(urlPath, api.server),
      { ca: fs.readFileSync(api.caFile), headers: { Authorization: `Bearer ${api.token}` }, timeout: 5000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          try {
            resolve(res.statusCode === 200 ? parseJson(body) : undefined);
          } catch {
            resolve(undefined);
          }
        });
      },
    );
    req.on('error', () => {
      resolve(undefined);
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(undefined);
    });
  });
}

/**
 * `<podIP>:<targetPort>` of a ready endpoint of Service `<svc>.<ns>.svc` for its port `port`, as
 * its EndpointSlices list it.
 */
async function serviceEndpoint(api: ApiAccess, service: string, port: number): Promise<string | undefined> {
  const [name = '', namespace = ''] = service.split('.');
  const portName = servicePortName(await apiGet(api, `/api/v1/namespaces/${namespace}/services/${name}`), port);
  if (portName === undefined) return undefined;
  const selector = encodeURIComponent(`kubernetes.io/service-name=${name}`);
  const slices = await apiGet(
    api,
    `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices?labelSelector=${selector}`,
  );
  return readyEndpoint(slices, portName);
}

function serve(dir: string, api: ApiAccess, nodeNetwork: Cidr | undefined): void {
  const socket = path.join(dir, 'egress.sock');
  const log = path.join(dir, 'egress.log');
  fs.rmSync(socket, { force: true });
  const server = http.createServer((_req, res) => {
    res.writeHead(405, { 'Content-Type': 'text/plain' });
    res.end('only CONNECT\n');
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? '';
    client.on('error', () => client.destroy());
    void decide(dir, api, target, nodeNetwork).then((d) => {
      fs.appendFileSync(log, `${JSON.stringify({ time: new Date().toISOString(), ...d })}\n`);
      if (!d.via) {
        client.end(
          `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\n` +
            `the local control plane's egress proxy refuses ${target}${d.service ? ` (${d.service})` : ''}: ` +
            'it is not on this machine and no local server is routed for it\n',
        );
        return;
      }
      const { host, port } = splitTarget(d.via);
      const upstream = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => {
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      });
    });
  });
  server.listen(socket, () => {
    process.stdout.write('listening\n');
  });
  const stop = () => {
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module && process.argv[2] === '--serve' && process.argv[3]) {
  serve(
    process.argv[3],
    apiAccess(parseJson(process.env.OPKIT_EGRESS_API ?? '{}')),
    parseCidr(process.env.OPKIT_EGRESS_NODE_NETWORK ?? ''),
  );
}
