/**
 * What the operator tells: Prometheus metrics (and who may scrape them), Events, logs and traces.
 *
 * This file is the folder's face: code outside the folder imports it from here alone.
 */
export { EventRecorder } from './events';
export { createLogger } from './logger';
export { Metrics } from './metrics';
export { MetricsAuthorizer } from './metrics-auth';
export { inSpan, loadOtlpTracer, otlpTracesUrl } from './tracing';
export type { ClientSpan, SpanAttributes, Tracer } from './tracing';
