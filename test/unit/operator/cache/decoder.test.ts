import pino from 'pino';
import type { KubeObject } from '../../../../constructs/contract';
import { BuiltinTypes } from '../../../../constructs';
import { InformerDecoder } from '../../../../operator/runtime/cache/decoder';
import { StringPool } from '../../../../operator/runtime/cache/string-pool';

function recordingLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
  return { logger, lines };
}

const listItem = (name: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: '1' } });

describe('InformerDecoder', () => {
  test("with a string pool, what it caches has its strings pooled, the JSON and the protobuf decoder's alike", () => {
    const { logger } = recordingLogger();
    const strings = new StringPool();
    const decoded = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } };
    const decoder = new InformerDecoder(BuiltinTypes.Pod, { logger, strings, protobuf: () => decoded });
    expect(decoder.typed(listItem('a'))).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } });
    // 'v1', 'Pod', 'a', 'ns', '1'
    expect(strings.size).toBe(5);
    expect(decoder.typed(decoder.protobuf!({} as never, 0))).toBe(decoded);
    // 'p' is new; the rest were seen.
    expect(strings.size).toBe(6);
  });

  test("a list's item (no apiVersion, no kind) is cached with the type's; a watched object keeps its own", () => {
    const { logger } = recordingLogger();
    const decoder = new InformerDecoder(BuiltinTypes.Deployment, { logger });
    expect(decoder.typed(listItem('a'))).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
    const watched = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'b' } };
    expect(decoder.typed(watched)).toBe(watched);
    expect(decoder.protobuf).toBeUndefined();
  });

  test('the transform keeps what it keeps of a JSON object; an object the protobuf decoder built is not transformed again', () => {
    const { logger } = recordingLogger();
    const transformed: string[] = [];
    const fromWire = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
    const decoder = new InformerDecoder(BuiltinTypes.Pod, {
      logger,
      transform: (o) => {
        transformed.push(o.metadata.name ?? '');
        return { apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name } };
      },
      protobuf: () => fromWire,
    });
    const json = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'j', labels: { a: 'b' } } };
    expect(decoder.typed(json)).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'j' } });
    const decoded = decoder.protobuf?.(undefined as never, 0);
    expect(decoded).toBe(fromWire);
    expect(decoder.typed(fromWire)).toBe(fromWire);
    expect(transformed).toEqual(['j']);
  });

  test('a transform that changes the kind: not cached, and said why', () => {
    const { logger, lines } = recordingLogger();
    const decoder = new InformerDecoder(BuiltinTypes.ConfigMap, {
      logger,
      transform: (o) => ({ ...o, kind: 'Secret' }),
    });
    expect(decoder.typed(listItem('c'))).toBeUndefined();
    expect(lines.join('')).toContain('not of the informer type');
    expect(lines.join('')).toContain('"kind":"Secret"');
  });
});
