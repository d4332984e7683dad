/**
 * A tracer that exports spans over OTLP/HTTP in its JSON encoding, with nothing but Node's own
 * modules: loaded only when tracing is on (run.ts imports it then). The OpenTelemetry SDK with its
 * OTLP exporter adds several MiB of packages to the image for what the runtime uses here — spans
 * with a parent, attributes and a status, batched to one endpoint — so the kit speaks the
 * protocol itself (docs/observability.md).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { ClientSpan, SpanAttributes, Tracer } from './tracing';

/** OTLP's span kinds and status codes (opentelemetry-proto trace.proto). */
const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_CLIENT = 3;
const STATUS_OK = 1;
const STATUS_ERROR = 2;

interface SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly start: bigint;
  end?: bigint;
  readonly attributes: Record<string, string | number | boolean>;
  status?: { code: number; message?: string };
}

export interface OtlpTracerOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  readonly url: string;
  /** `service.name` of the spans' resource. */
  readonly serviceName: string;
  /** `service.instance.id`: which replica. */
  readonly instanceId: string;
  readonly serviceVersion?: string;
  readonly logger: Logger;
  /** How often buffered spans are sent. @default 1000 */
  readonly flushIntervalMs?: number;
  /** Spans sent at most per request; a full batch is sent at once. @default 512 */
  readonly maxBatch?: number;
  /** Spans buffered at most while the endpoint is slow or down; more are dropped (and counted). @default 4096 */
  readonly maxQueue?: number;
}

/** Nanoseconds since the epoch, from a monotonic clock anchored once to the wall clock. */
const EPOCH_OFFSET_NS = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
const nowNs = (): bigint => process.hrtime.bigint() + EPOCH_OFFSET_NS;

export class OtlpTracer implements Tracer {
  private readonly current = new AsyncLocalStorage<SpanRecord>();
  private buffer: SpanRecord[] = [];
  private readonly timer: NodeJS.Timeout;
  private sending: Promise<void> = Promise.resolve();
  private dropped = 0;
  private failing = false;

  constructor(private readonly options: OtlpTracerOptions) {
    this.timer = setInterval(() => {
      this.flush();
    }, options.flushIntervalMs ?? 1000);
    this.timer.unref();
  }

  inSpan<T>(name: string, attributes: SpanAttributes, fn: () => T): T {
    const span = this.start(name, SPAN_KIND_INTERNAL, attributes);
    let result: T;
    try {
      result = this.current.run(span, fn);
    } catch (err) {
      this.finish(span, err);
      throw err;
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => {
          this.finish(span);
          return value;
        },
        (err: unknown) => {
          this.finish(span, err);
          throw err;
        },
      ) as T;
    }
    this.finish(span);
    return result;
  }

  clientSpan(name: string, attributes: SpanAttributes): ClientSpan | undefined {
    if (!this.current.getStore()) return undefined;
    const span = this.start(name, SPAN_KIND_CLIENT, attributes);
    return {
      traceparent: `00-${span.traceId}-${span.spanId}-01`,
      end: (status, error) => {
        if (status) span.attributes['http.response.status_code'] = status;
        const failed = status >= 400 || status === 0 ? new Error(status ? `HTTP ${status}` : 'no answer') : undefined;
        this.finish(span, error ?? failed);
      },
    };
  }

  async shutdown(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    await this.sending;
  }

  private start(name: string, kind: number, attributes: SpanAttributes): SpanRecord {
    const parent = this.current.getStore();
    const attrs: Record<string, string | number | boolean> = {};
    for (const [k, v] of Object.entries(attributes)) if (v !== undefined) attrs[k] = v;
    return {
      traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
      spanId: randomBytes(8).toString('hex'),
      parentSpanId: parent?.spanId,
      name,
      kind,
      start: nowNs(),
      attributes: attrs,
    };
  }

  private finish(span: SpanRecord, error?: unknown): void {
    span.end = nowNs();
    span.status =
      error === undefined
        ? { code: span.kind === SPAN_KIND_CLIENT ? STATUS_OK : 0 }
        : { code: STATUS_ERROR, message: error instanceof Error ? error.message : JSON.stringify(error) };
    if (this.buffer.length >= (this.options.maxQueue ?? 4096)) {
      this.dropped++;
      return;
    }
    this.buffer.push(span);
    if (this.buffer.length >= (this.options.maxBatch ?? 512)) this.flush();
  }

  /** Sends the buffer, one request at a time; an endpoint that fails loses those spans, never a reconcile. */
  private flush(): void {
    if (this.buffer.length === 0) return;
    const batch = this.buffer.splice(0, this.options.maxBatch ?? 512);
    const body = JSON.stringify(this.payload(batch));
    this.sending = this.sending.then(() => this.post(body, batch.length));
  }

  private async post(body: string, spans: number): Promise<void> {
    const log = this.options.logger;
    try {
      const res = await fetch(this.options.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      if (this.failing) log.info({ url: this.options.url }, 'trace export works again');
      this.failing = false;
    } catch (err) {
      // Said once per outage, not once per batch.
      if (!this.failing) log.warn({ err, url: this.options.url, spans }, 'trace export failed; dropping spans');
      this.failing = true;
    }
    if (this.dropped > 0) {
      log.warn({ dropped: this.dropped }, 'spans dropped: the trace buffer was full');
      this.dropped = 0;
    }
  }

  /** An ExportTraceServiceRequest in OTLP's JSON encoding (ids in hex, times as decimal strings). */
  private payload(spans: readonly SpanRecord[]) {
    const { serviceName, instanceId, serviceVersion } = this.options;
    return {
      resourceSpans: [
        {
          resource: {
            attributes: keyValues({
              'service.name': serviceName,
              'service.instance.id': instanceId,
              ...(serviceVersion ? { 'service.version': serviceVersion } : {}),
            }),
          },
          scopeSpans: [
            {
              scope: { name: 'cdk8s-operator-kit' },
              spans: spans.map((s) => ({
                traceId: s.traceId,
                spanId: s.spanId,
                ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
                name: s.name,
                kind: s.kind,
                startTimeUnixNano: s.start.toString(),
                endTimeUnixNano: (s.end ?? s.start).toString(),
                attributes: keyValues(s.attributes),
                status: s.status ?? { code: 0 },
              })),
            },
          ],
        },
      ],
    };
  }
}

/** Attributes as OTLP KeyValues (integers as strings, as its JSON encoding has 64-bit integers). */
function keyValues(attributes: Readonly<Record<string, string | number | boolean>>) {
  return Object.entries(attributes).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: String(v) }
            : { doubleValue: v },
  }));
}
