import { getEventListeners } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BuiltinTypes } from '../../../../constructs/contract';
import { HttpKubeClient, type WatchEvent } from '../../../../operator/runtime/client/client';

/**
 * A watch's life against a server on loopback that answers each watch with two events and then
 * ends it, as the API server ends a watch at its timeout. An informer passes its one stop signal
 * to every watch it opens, for as long as it runs.
 */
let server: http.Server;
let client: HttpKubeClient;

/** A client of a plain HTTP server on loopback: no credentials to add. */
function clientOf(port: number): HttpKubeClient {
  return new HttpKubeClient(
    {
      getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }),
      applyToHTTPSOptions: () => Promise.resolve(),
    },
    { fieldManager: 'test' },
  );
}

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    const event = (name: string) =>
      `${JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } } })}\n`;
    res.write(event('a'));
    res.end(event('b'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  client = clientOf(port);
});

afterAll(async () => {
  client.close();
  await new Promise((resolve) => server.close(resolve));
});

test('a watch the server ends leaves nothing on the signal it was given: an informer restarting its watches for days does not pile up listeners', async () => {
  const stop = new AbortController();
  const seen: string[] = [];
  for (let i = 0; i < 20; i++) {
    await client.watch(BuiltinTypes.ConfigMap, {
      namespace: 'default',
      query: {},
      signal: stop.signal,
      onEvent: (e: WatchEvent) => seen.push(String((e.object as { metadata?: { name?: string } }).metadata?.name)),
    });
  }
  // Every watch ran to its end and delivered its events.
  expect(seen).toEqual(Array.from({ length: 20 }, () => ['a', 'b']).flat());
  expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
});

test('aborting the signal ends a watch that is open, as its end (resolved), and takes its listener off', async () => {
  const hanging = http.createServer((_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.flushHeaders(); // accepted, and then nothing: a quiet watch
  });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const { port } = hanging.address() as AddressInfo;
  const quiet = clientOf(port);
  const received: WatchEvent[] = [];
  const stop = new AbortController();
  try {
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const watching = quiet.watch(BuiltinTypes.ConfigMap, {
      query: {},
      signal: stop.signal,
      onEvent: (e) => received.push(e),
      onOpen: () => {
        opened();
      },
    });
    await open;
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    stop.abort();
    await expect(watching).resolves.toBeUndefined();
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(received).toEqual([]);
  } finally {
    quiet.close();
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
  }
});
