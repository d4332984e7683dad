/**
 * Benchmark: the client's CPU per request to the API server over HTTP/1.1 (Node's https with a
 * keep-alive agent, as our client makes them; and our client itself) against HTTP/2 (Node's
 * http2, one session, as client-go multiplexes its requests). Each round makes M requests with
 * C in flight, alternating the transports, on a control plane started by the test harness; the
 * CPU is this process's own (user + system), so the API server's share is not in it.
 *
 *   npm run bench:http-clients
 *   M=4000 C=4 ROUNDS=3 npm run bench:http-clients
 */
import * as http2 from 'node:http2';
import * as https from 'node:https';
import { HttpKubeClient } from '../operator/runtime/client/client';
import { loadKubeConfig } from '../operator/runtime/client/kubeconfig';
import { startControlPlane } from '../testing/control-plane';
import { percentile } from './relist';

const M = Number(process.env.M ?? 3000);
const C = Number(process.env.C ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PATH = '/api/v1/namespaces/default';

type Get = () => Promise<void>;

/** CPU microseconds per request for M requests, C at a time. */
async function cpuPerRequest(get: Get): Promise<number> {
  for (let i = 0; i < 50; i++) await get(); // connections made, code warmed
  const before = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next++ < M) await get();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / M;
}

/** The credentials' headers (a bearer token) of request options, as an HTTP/2 request takes them. */
function headersOf(options: https.RequestOptions): http2.OutgoingHttpHeaders {
  const given: unknown = options.headers;
  return given && typeof given === 'object' && !Array.isArray(given) ? (given as http2.OutgoingHttpHeaders) : {};
}

function expectOk(status: number | undefined, body: string): void {
  if (status !== 200) throw new Error(`GET ${PATH}: ${status}: ${body.slice(0, 200)}`);
  if (!body.includes('"kind":"Namespace"')) throw new Error(`GET ${PATH}: not a Namespace`);
}

async function main(): Promise<void> {
  const cp = await startControlPlane({ verbose: true });
  try {
    const config = loadKubeConfig({ path: cp.kubeconfig });
    const tls: https.RequestOptions = {};
    await config.applyToHTTPSOptions(tls);
    const url = new URL(cp.server);

    const agent = new https.Agent({ keepAlive: true, maxSockets: 64 });
    const http1: Get = () =>
      new Promise((resolve, reject) => {
        const req = https.request(
          { ...tls, agent, hostname: url.hostname, port: url.port, path: PATH, method: 'GET' },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              expectOk(res.statusCode, Buffer.concat(chunks).toString());
              resolve();
            });
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });

    const session = http2.connect(cp.server, {
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      servername: tls.servername ?? undefined,
    });
    // The credentials' headers (a bearer token), where the kubeconfig has one; ours is a client certificate.
    const headers = headersOf(tls);
    const h2: Get = () =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ...headers, ':method': 'GET', ':path': PATH });
        let status: number | undefined;
        const chunks: Buffer[] = [];
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          expectOk(status, Buffer.concat(chunks).toString());
          resolve();
        });
        stream.on('error', reject);
        stream.end();
      });

    const client = new HttpKubeClient(config, { fieldManager: 'bench' });
    const ours: Get = async () => {
      const ns = await client.request<{ kind: string }>('GET', PATH);
      if (ns.kind !== 'Namespace') throw new Error(`GET ${PATH}: not a Namespace`);
    };

    const transports: readonly { name: string; get: Get; cpu: number[] }[] = [
      { name: 'https (HTTP/1.1, keep-alive)', get: http1, cpu: [] },
      { name: 'our client (HTTP/1.1)', get: ours, cpu: [] },
      { name: 'http2', get: h2, cpu: [] },
    ];
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of transports) t.cpu.push(await cpuPerRequest(t.get));
    }
    session.close();
    agent.destroy();
    client.close();
    const median = (xs: readonly number[]) =>
      percentile(
        [...xs].sort((a, b) => a - b),
        50,
      );
    const reference = median(transports[0]?.cpu ?? []);
    console.log(
      `M = ${M} requests a round, ${C} in flight, ${ROUNDS} rounds; CPU µs per request (rounds; median; vs https):`,
    );
    for (const { name, cpu } of transports) {
      console.log(
        `| ${name} | ${cpu.map((x) => x.toFixed(0)).join(', ')} | ${median(cpu).toFixed(0)} | ${(median(cpu) / reference).toFixed(2)}× |`,
      );
    }
  } finally {
    await cp.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
