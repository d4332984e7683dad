/**
 * An OTLP/HTTP trace receiver on a free loopback port: it counts the spans and requests it is
 * sent and answers with `status`; unless `keep` is false (the bench, which measures the sender,
 * not this), it also keeps every ExportTraceServiceRequest (JSON encoding), parsed.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code: number; message?: string };
}

export interface OtlpRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

export interface OtlpReceiver {
  /** The traces URL (…/v1/traces). */
  readonly url: string;
  /** The base URL, as `--otlp-endpoint` takes it. */
  readonly endpoint: string;
  /** The requests received, when kept. */
  readonly requests: { path: string; contentType: string; body: OtlpRequest }[];
  /** Every span received so far, when kept. */
  spans(): OtlpSpan[];
  /** How many spans and requests arrived, kept or not. */
  readonly counts: { readonly spans: number; readonly requests: number };
  close(): Promise<void>;
}

export async function startOtlpReceiver(status = 200, options: { keep?: boolean } = {}): Promise<OtlpReceiver> {
  const requests: OtlpReceiver['requests'] = [];
  const counts = { spans: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      counts.requests++;
      // Counted by their ids, without parsing ("parentSpanId" does not match).
      counts.spans += body.split('"spanId"').length - 1;
      if (options.keep ?? true) {
        requests.push({
          path: req.url ?? '',
          contentType: req.headers['content-type'] ?? '',
          body: JSON.parse(body) as OtlpRequest,
        });
      }
      res.writeHead(status, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${endpoint}/v1/traces`,
    endpoint,
    requests,
    counts,
    spans: () => requests.flatMap((r) => r.body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans))),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => {
          r();
        });
      }),
  };
}

/** A span attribute's value, as OTLP's JSON encoding has it (`{ stringValue: … }`). */
export function attributeOf(span: OtlpSpan, key: string): Record<string, unknown> | undefined {
  return span.attributes.find((a) => a.key === key)?.value;
}
