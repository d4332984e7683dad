import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { BuiltinTypes } from '../../../../constructs/contract';
import { ApiError } from '../../../../operator/runtime/client';
import { HttpKubeClient } from '../../../../operator/runtime/client/client';

/**
 * A 429 with Retry-After is the API server saying "send it again later" — API Priority and Fairness
 * rejecting what its queues cannot hold, or a kind's storage (re)initializing right after its CRD
 * changed — so the client sends the request again after the wait it names (as client-go does, up to
 * ten times), and the caller sees only the answer that comes then. Against a server on loopback that
 * answers as the test tells it; `Retry-After: 0`, so nothing waits on a clock.
 */
let server: http.Server;
let port: number;
/** The answers to give, in order (then 200 with the body the request sent, or `{}`); `reset`: the connection cut, no answer. */
let answers: ({ status: number; retryAfter?: string } | 'reset')[];
let seen: { method: string; body: string }[];

function clientOf(
  observer?: (status: number) => void,
  onRetry?: (method: string, code: string) => void,
): HttpKubeClient {
  return new HttpKubeClient(
    {
      getCurrentCluster: () => ({ server: `http://127.0.0.1:${port}` }),
      applyToHTTPSOptions: () => Promise.resolve(),
    },
    {
      fieldManager: 'test',
      observer:
        observer &&
        ((_m, _p, status) => {
          observer(status);
        }),
      onRetry,
    },
  );
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', body });
      const answer = answers.shift();
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      if (answer) {
        if (answer.retryAfter !== undefined) res.setHeader('Retry-After', answer.retryAfter);
        res
          .writeHead(answer.status)
          .end(JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'storage is (re)initializing' }));
        return;
      }
      res.writeHead(200).end(body || JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'a' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

beforeEach(() => {
  answers = [];
  seen = [];
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

test('a read answered 429 with Retry-After is sent again, and the caller gets the answer that comes then', async () => {
  answers = [
    { status: 429, retryAfter: '0' },
    { status: 429, retryAfter: '0' },
  ];
  const statuses: number[] = [];
  const client = clientOf((s) => statuses.push(s));
  try {
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).resolves.toMatchObject({ metadata: { name: 'a' } });
  } finally {
    client.close();
  }
  expect(seen).toHaveLength(3);
  // Each answer is still observed (metrics count the 429s).
  expect(statuses).toEqual([429, 429, 200]);
});

test('a write is sent again whole: its body each time', async () => {
  answers = [{ status: 429, retryAfter: '0' }];
  const client = clientOf();
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } };
  try {
    await expect(client.apply(BuiltinTypes.ConfigMap, configMap)).resolves.toMatchObject({ data: { k: 'v' } });
  } finally {
    client.close();
  }
  expect(seen.map((s) => s.method)).toEqual(['PATCH', 'PATCH']);
  expect(seen[1]?.body).toBe(seen[0]?.body);
  expect(JSON.parse(seen[1]?.body ?? '{}')).toMatchObject({ data: { k: 'v' } });
});

test('a 429 without Retry-After, a 503 without it, or any other error, is the caller’s at once', async () => {
  const client = clientOf();
  try {
    answers = [{ status: 429 }];
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).rejects.toMatchObject({ status: 429 });
    answers = [{ status: 503 }];
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).rejects.toMatchObject({ status: 503 });
    answers = [{ status: 500, retryAfter: '0' }];
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).rejects.toMatchObject({ status: 500 });
  } finally {
    client.close();
  }
  expect(seen).toHaveLength(3);
});

test('a 503 with Retry-After (a server shutting down, a priority level full) is sent again too, each retry told with its code', async () => {
  answers = [
    { status: 503, retryAfter: '0' },
    { status: 429, retryAfter: '0' },
  ];
  const retries: string[] = [];
  const client = clientOf(undefined, (method, code) => retries.push(`${method} ${code}`));
  try {
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).resolves.toMatchObject({ metadata: { name: 'a' } });
  } finally {
    client.close();
  }
  expect(retries).toEqual(['GET 503', 'GET 429']);
  expect(seen).toHaveLength(3);
});

test('a connection reset before any answer is sent again for an idempotent verb, never for a create', async () => {
  const retries: string[] = [];
  const client = clientOf(undefined, (method, code) => retries.push(`${method} ${code}`));
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } };
  try {
    answers = ['reset', 'reset'];
    await expect(client.apply(BuiltinTypes.ConfigMap, configMap)).resolves.toMatchObject({ data: { k: 'v' } });
    expect(retries).toEqual(['PATCH <error>', 'PATCH <error>']);
    // A create may have been made before the connection went: its reset is the caller's.
    answers = ['reset'];
    const err: unknown = await client.create(BuiltinTypes.ConfigMap, configMap, 'ns').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ECONNRESET' });
    expect(retries).toHaveLength(2);
  } finally {
    client.close();
  }
});

test('after ten retries, the eleventh 429 is the caller’s, as an ApiError', async () => {
  answers = Array.from({ length: 11 }, () => ({ status: 429, retryAfter: '0' }));
  const client = clientOf();
  try {
    const err: unknown = await client.get(BuiltinTypes.ConfigMap, 'a', 'ns').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 429, reason: 'TooManyRequests' });
  } finally {
    client.close();
  }
  expect(seen).toHaveLength(11);
});

test('a watch whose start is answered 429 with Retry-After is started again in place, and opened once', async () => {
  answers = [{ status: 429, retryAfter: '0' }];
  const retries: string[] = [];
  const client = clientOf(undefined, (method, code) => retries.push(`${method} ${code}`));
  let opened = 0;
  try {
    await client.watch(BuiltinTypes.ConfigMap, {
      namespace: 'ns',
      query: {},
      onEvent: () => undefined,
      onOpen: () => opened++,
      signal: new AbortController().signal,
    });
  } finally {
    client.close();
  }
  expect(retries).toEqual(['WATCH 429']);
  expect(seen).toHaveLength(2);
  expect(opened).toBe(1);
});
