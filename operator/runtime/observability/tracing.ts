import type * as OtlpTracerModule from './otlp-tracer';
import type { OtlpTracerOptions } from './otlp-tracer';
import type { RequestTracer, SpanAttributes } from '../client';

export type { ClientSpan, SpanAttributes } from '../client';
/**
 * What the runtime asks of a tracer: a span around a piece of work (a reconcile, a step of it),
 * child of the span the caller runs in, and a client span for an API request with the W3C
 * `traceparent` that request carries. The runtime holds a `Tracer` only when tracing is on
 * (`--otlp-endpoint`); otherwise it holds none and `inSpan` below is a plain call, so tracing
 * costs nothing when off and its implementation (otlp-tracer.ts) is never loaded.
 */
export interface Tracer extends RequestTracer {
  /**
   * Runs `fn` in a new span named `name`, child of the span this call runs in (a new trace's root
   * outside any). The span ends when `fn` returns or its promise settles; a throw or rejection
   * marks it failed and passes through.
   */
  inSpan<T>(name: string, attributes: SpanAttributes, fn: () => T): T;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

/** `fn` in a span when there is a tracer; a plain call when there is none (tracing off). */
export function inSpan<T>(tracer: Tracer | undefined, name: string, fn: () => T, attributes: SpanAttributes = {}): T {
  return tracer ? tracer.inSpan(name, attributes, fn) : fn();
}

/**
 * The OTLP/HTTP traces URL the flag or the standard environment names, or none (tracing off):
 * `--otlp-endpoint` and `OTEL_EXPORTER_OTLP_ENDPOINT` are base URLs (`/v1/traces` is added, as
 * the OpenTelemetry specification says), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as it is.
 */
export function otlpTracesUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = flag ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const trimmed = base?.replace(/\/+$/, '');
  const url = trimmed
    ? trimmed.endsWith('/v1/traces')
      ? trimmed
      : `${trimmed}/v1/traces`
    : env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--otlp-endpoint ${JSON.stringify(url)} is not a URL; give e.g. http://otel-collector:4318`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new Error(`--otlp-endpoint ${JSON.stringify(url)} must be http:// or https:// (OTLP over HTTP)`);
  return parsed.toString();
}

/**
 * An OTLP/HTTP tracer (otlp-tracer.ts), loaded only by this call: without tracing, the exporter's
 * module is never evaluated (the package is CommonJS, so a `require` here is a lazy load).
 */
export function loadOtlpTracer(options: OtlpTracerOptions): Tracer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on
  const { OtlpTracer } = require('./otlp-tracer') as typeof OtlpTracerModule;
  return new OtlpTracer(options);
}
