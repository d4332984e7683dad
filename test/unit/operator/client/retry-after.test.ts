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
/** The answers to give, in order (then 200 with the body the request sent, or `{}`). */
let answers: { status: number; retryAfter?: string }[];
let seen: { method: string; body: string }[];

function clientOf(observer?: (status: number) => void): HttpKubeClient {
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

test('a 429 without Retry-After, or any other error, is the caller’s at once', async () => {
  const client = clientOf();
  try {
    answers = [{ status: 429 }];
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).rejects.toMatchObject({ status: 429 });
    answers = [{ status: 500, retryAfter: '0' }];
    await expect(client.get(BuiltinTypes.ConfigMap, 'a', 'ns')).rejects.toMatchObject({ status: 500 });
  } finally {
    client.close();
  }
  expect(seen).toHaveLength(2);
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
