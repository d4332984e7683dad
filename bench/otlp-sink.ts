/**
 * Where the bench sends traces when it measures tracing on: an OTLP/HTTP endpoint on loopback
 * that counts the spans it is sent and keeps nothing, so that what is measured is the
 * reconciler's cost of tracing, not a collector's.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** The base URL, as `--otlp-endpoint` takes it. */
  readonly endpoint: string;
  readonly spans: number;
  readonly requests: number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const counts = { spans: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      counts.requests++;
      // Spans are counted by their ids, without parsing the whole request.
      counts.spans += Buffer.concat(chunks).toString('utf8').split('"spanId"').length - 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get spans() {
      return counts.spans;
    },
    get requests() {
      return counts.requests;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => {
          r();
        });
      }),
  };
}
