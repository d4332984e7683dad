/**
 * What the client asks of a tracer for each API request: a client span and the W3C `traceparent`
 * it sends. The client's own small face of tracing, so that the client needs nothing of
 * `observability/` (whose Tracer is this and more, and whose Events write through the client).
 */

/** Attribute values as OpenTelemetry has them (the kinds the runtime records). */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | undefined>>;

/** An API request's span, ended by the client when the answer comes. */
export interface ClientSpan {
  /** The `traceparent` header value (W3C Trace Context) that names this span as the request's parent. */
  readonly traceparent: string;
  /** Ends the span with the answer's HTTP status (0: no answer), an error status from 400 up. */
  end(status: number, error?: unknown): void;
}

/** Gives each API request its span. */
export interface RequestTracer {
  /** A client span for an API request, child of the span this call runs in; none outside a span. */
  clientSpan(name: string, attributes: SpanAttributes): ClientSpan | undefined;
}
