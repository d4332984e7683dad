import pino from 'pino';
import { parseFlags } from '../../../../operator/flags';
import { ApiError } from '../../../../operator/runtime/client/errors';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readRoutes } from '../../../../operator/runtime/local/egress-routes';
import {
  isLoopbackServer,
  readCallers,
  routeToLoopback,
  servicesCalled,
} from '../../../../operator/runtime/local/loopback-webhooks';

const logger = pino({ level: 'silent' });

test('only an API server on this machine counts as loopback', () => {
  for (const server of ['https://127.0.0.1:6443', 'https://localhost:6443', 'https://[::1]:6443', 'https://127.1.2.3'])
    expect({ server, loopback: isLoopbackServer(server) }).toEqual({ server, loopback: true });
  for (const server of [
    'https://10.0.0.1:443',
    'https://kube.example.com',
    'https://127.0.0.1.example.com',
    'nonsense',
  ])
    expect({ server, loopback: isLoopbackServer(server) }).toEqual({ server, loopback: false });
});

test('--webhook-loopback makes its own certificate: a certificate flag beside it is refused', () => {
  expect(parseFlags(['--webhook-loopback'], ['memcached']).webhookLoopback).toBe(true);
  expect(() =>
    parseFlags(['--webhook-loopback', '--webhook-cert-secret=s', '--webhook-cert-hosts=h'], ['memcached']),
  ).toThrow(/--webhook-loopback makes its own certificate/);
});

describe('serving webhooks on loopback through their Services', () => {
  /** Objects as the API server keeps them, patched with JSON patches that test the resourceVersion. */
  function cluster(objects: Record<string, any>) {
    const patches: { name: string; body: any[] }[] = [];
    const created: string[] = [];
    const client = {
      create: async (type: { kind: string }, o: any) => {
        created.push(`${type.kind}/${o.metadata.name}`);
        objects[o.metadata.name] = o;
        return o;
      },
      get: async (_type: unknown, name: string) => {
        if (!objects[name]) throw new ApiError(404, 'NotFound', `${name} not found`);
        return structuredClone(objects[name]);
      },
      jsonPatch: async (_type: unknown, name: string, _ns: unknown, body: any[]) => {
        const o = objects[name];
        const [test, ...ops] = body;
        if (test.value !== o.metadata.resourceVersion) throw new Error('conflict');
        for (const op of ops) {
          const keys = op.path.split('/').slice(1);
          const parent = keys.slice(0, -1).reduce((at: any, k: string) => at[k], o);
          parent[keys[keys.length - 1]] = op.value;
        }
        o.metadata.resourceVersion = String(Number(o.metadata.resourceVersion) + 1);
        patches.push({ name, body });
      },
    };
    return { client: client as never, patches, created };
  }

  const crd = () => ({
    metadata: { name: 'shelves.example.com', resourceVersion: '1' },
    spec: {
      conversion: {
        strategy: 'Webhook',
        webhook: { clientConfig: { service: { name: 'shelf-webhook', namespace: 'ns', path: '/convert', port: 443 } } },
      },
    },
  });
  const configuration = () => ({
    metadata: { name: 'shelf-webhook', resourceVersion: '7' },
    webhooks: [
      { clientConfig: { service: { name: 'shelf-webhook', path: '/validate-example-com-v1-shelf' } } },
      { clientConfig: { url: 'https://elsewhere:9443/validate-example-com-v1-book' } },
    ],
  });

  /** A routes file as the control plane's egress proxy reads it. */
  function routesFile(): string {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opkit-routes-')), 'routes.json');
    fs.writeFileSync(file, '{}\n');
    return file;
  }

  test('each Service the callers name is routed here; the callers keep their Services and only gain the caBundle', async () => {
    const objects: Record<string, any> = {
      'shelves.example.com': crd(),
      'shelf-webhook': configuration(),
      ns: { metadata: { name: 'ns' } },
    };
    const { client, created } = cluster(objects);
    const routes = routesFile();
    const callers = await readCallers(client, {
      conversionCrds: ['shelves.example.com'],
      validatingConfiguration: 'shelf-webhook',
    });
    // The validating webhook's Service names no namespace, so it has no address to route.
    expect(servicesCalled(callers)).toEqual(['shelf-webhook.ns.svc:443']);
    await routeToLoopback(client, { routes, port: 9443, cert: 'CERT' }, callers, logger);
    expect(readRoutes(routes)).toEqual({ 'shelf-webhook.ns.svc:443': '127.0.0.1:9443' });
    // The Service (here, of the configuration's name) and its namespace are there: nothing made.
    expect(created).toEqual([]);
    const caBundle = Buffer.from('CERT').toString('base64');
    expect(objects['shelves.example.com'].spec.conversion.webhook.clientConfig).toEqual({
      ...crd().spec.conversion.webhook.clientConfig,
      caBundle,
    });
    expect(objects['shelf-webhook'].webhooks.map((w: any) => w.clientConfig)).toEqual(
      configuration().webhooks.map((w) => ({ ...w.clientConfig, caBundle })),
    );
  });

  test('a second start with the same certificate writes nothing; another certificate is trusted anew', async () => {
    const objects: Record<string, any> = { 'shelves.example.com': crd() };
    const { client, patches, created } = cluster(objects);
    const targets = { conversionCrds: ['shelves.example.com'] };
    const routes = routesFile();
    await routeToLoopback(client, { routes, port: 9443, cert: 'CERT' }, await readCallers(client, targets), logger);
    await routeToLoopback(client, { routes, port: 9443, cert: 'CERT' }, await readCallers(client, targets), logger);
    expect(patches).toHaveLength(1);
    await routeToLoopback(client, { routes, port: 9444, cert: 'CERT2' }, await readCallers(client, targets), logger);
    expect(patches).toHaveLength(2);
    expect(readRoutes(routes)).toEqual({ 'shelf-webhook.ns.svc:443': '127.0.0.1:9444' });
    expect(objects['shelves.example.com'].spec.conversion.webhook.clientConfig.service.name).toBe('shelf-webhook');
    // Only the CRDs were applied (the local path): the API server needs the Service (and its
    // namespace) to call the webhook, so the run made them, once.
    expect(created).toEqual(['Namespace/ns', 'Service/shelf-webhook']);
  });

  test('an object not installed is skipped, not an error', async () => {
    const { client, patches } = cluster({});
    const routes = routesFile();
    const callers = await readCallers(client, { conversionCrds: ['missing.example.com'] });
    await expect(
      routeToLoopback(client, { routes, port: 9443, cert: 'CERT' }, callers, logger),
    ).resolves.toBeUndefined();
    expect(patches).toEqual([]);
    expect(readRoutes(routes)).toEqual({});
  });
});
