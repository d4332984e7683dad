/**
 * Traces: the OTLP/HTTP JSON the tracer sends (received by an HTTP server on loopback), its
 * parent links and W3C trace context, and where traces go by flag and environment.
 */
import pino from 'pino';
import { OtlpTracer } from '../../../../operator/runtime/observability/otlp-tracer';
import { inSpan, otlpTracesUrl } from '../../../../operator/runtime/observability/tracing';
import { attributeOf as attr, type OtlpSpan, startOtlpReceiver as receiver } from '../../../support/otlp';

function tracerFor(url: string, logger = pino({ level: 'silent' })) {
  // A long interval: the test sends by shutdown, never by the clock.
  return new OtlpTracer({ url, serviceName: 'memcached', instanceId: 'pod-1_ab', logger, flushIntervalMs: 3_600_000 });
}

describe('OtlpTracer', () => {
  test('a reconcile is one trace: steps are children of the reconcile, requests of their step', async () => {
    const rx = await receiver();
    const tracer = tracerFor(rx.url);
    let traceparent = '';
    const result = await tracer.inSpan('reconcile', { controller: 'memcached', 'k8s.object.name': 'a' }, async () => {
      const observed = tracer.inSpan('observe', {}, () => 'sync value');
      await tracer.inSpan('apply', {}, async () => {
        const request = tracer.clientSpan('PATCH', { 'http.request.method': 'PATCH' });
        traceparent = request?.traceparent ?? '';
        await Promise.resolve();
        request?.end(200);
      });
      return observed;
    });
    expect(result).toBe('sync value');
    await tracer.shutdown();
    await rx.close();

    expect(rx.requests.map((r) => [r.path, r.contentType])).toEqual([['/v1/traces', 'application/json']]);
    const resource = rx.requests[0]?.body.resourceSpans[0]?.resource.attributes ?? [];
    expect(Object.fromEntries(resource.map((a) => [a.key, a.value.stringValue]))).toEqual({
      'service.name': 'memcached',
      'service.instance.id': 'pod-1_ab',
    });
    const spans = rx.spans();
    const byName = new Map(spans.map((s) => [s.name, s]));
    const [root, observe, apply, patch] = ['reconcile', 'observe', 'apply', 'PATCH'].map((n) => {
      const s = byName.get(n);
      if (!s) throw new Error(`no span ${n} in ${spans.map((x) => x.name).join(', ')}`);
      return s;
    }) as [OtlpSpan, OtlpSpan, OtlpSpan, OtlpSpan];
    expect(spans).toHaveLength(4);
    expect(rx.counts).toEqual({ spans: 4, requests: 1 });
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));
    expect(root.parentSpanId).toBeUndefined();
    expect(observe.parentSpanId).toBe(root.spanId);
    expect(apply.parentSpanId).toBe(root.spanId);
    expect(patch.parentSpanId).toBe(apply.spanId);
    expect(patch.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(root.kind).toBe(1); // SPAN_KIND_INTERNAL
    expect(attr(patch, 'http.response.status_code')).toEqual({ intValue: '200' });
    expect(attr(root, 'controller')).toEqual({ stringValue: 'memcached' });
    // W3C trace context: version 00, the trace, the request's own span, sampled.
    expect(traceparent).toBe(`00-${root.traceId}-${patch.spanId}-01`);
    for (const s of spans) {
      expect(s.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano)).toBe(true);
    }
    // A child lies within its parent.
    expect(BigInt(apply.startTimeUnixNano) >= BigInt(root.startTimeUnixNano)).toBe(true);
    expect(BigInt(apply.endTimeUnixNano) <= BigInt(root.endTimeUnixNano)).toBe(true);
  });

  test('a failing step marks its span and the reconcile failed, and the error passes through', async () => {
    const rx = await receiver();
    const tracer = tracerFor(rx.url);
    const failing = tracer.inSpan('reconcile', {}, () =>
      tracer.inSpan('apply', {}, async () => {
        await Promise.resolve();
        throw new Error('apply refused');
      }),
    );
    await expect(failing).rejects.toThrow('apply refused');
    expect(() =>
      tracer.inSpan('status', {}, () => {
        throw new Error('sync failure');
      }),
    ).toThrow('sync failure');
    await tracer.shutdown();
    await rx.close();
    const spans = rx.spans();
    expect(spans.map((s) => [s.name, s.status])).toEqual([
      ['apply', { code: 2, message: 'apply refused' }],
      ['reconcile', { code: 2, message: 'apply refused' }],
      ['status', { code: 2, message: 'sync failure' }],
    ]);
  });

  test('requests outside a traced reconcile (informers) make no span', async () => {
    const rx = await receiver();
    const tracer = tracerFor(rx.url);
    expect(tracer.clientSpan('GET', {})).toBeUndefined();
    await tracer.shutdown();
    await rx.close();
    expect(rx.requests).toEqual([]);
  });

  test('an endpoint that refuses loses the spans, never the reconcile, and says so once', async () => {
    const rx = await receiver(503);
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    const tracer = tracerFor(rx.url, logger);
    expect(tracer.inSpan('reconcile', {}, () => 7)).toBe(7);
    await tracer.shutdown();
    await rx.close();
    expect(rx.requests).toHaveLength(1);
    expect(lines.filter((l) => l.includes('trace export failed'))).toHaveLength(1);
  });
});

describe('tracing off', () => {
  test('inSpan without a tracer is the call itself', () => {
    const value = { same: true };
    expect(inSpan(undefined, 'observe', () => value)).toBe(value);
  });
});

describe('otlpTracesUrl', () => {
  test.each([
    ['the flag, a base URL', 'http://collector:4318', {}, 'http://collector:4318/v1/traces'],
    ['the flag with a trailing slash', 'http://collector:4318/', {}, 'http://collector:4318/v1/traces'],
    ['the flag naming the traces path', 'http://c:4318/v1/traces', {}, 'http://c:4318/v1/traces'],
    [
      'the standard base variable',
      undefined,
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://o:4318' },
      'https://o:4318/v1/traces',
    ],
    ['the traces variable, as it is', undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://o/t' }, 'http://o/t'],
    ['the flag over the variable', 'http://f:1', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://e:2' }, 'http://f:1/v1/traces'],
    ['nothing: tracing off', undefined, {}, undefined],
  ])('%s', (_what, flag, env, url) => {
    expect(otlpTracesUrl(flag, env)).toBe(url);
  });

  test('a URL that is not HTTP is refused with the flag named', () => {
    expect(() => otlpTracesUrl('grpc://collector:4317', {})).toThrow(
      /--otlp-endpoint .* must be http:\/\/ or https:\/\//,
    );
    expect(() => otlpTracesUrl('collector', {})).toThrow(/--otlp-endpoint "collector\/v1\/traces" is not a URL/);
  });
});
