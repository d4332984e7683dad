/**
 * The engine under the Helm chart, without helm: values located by what changes with them,
 * variants merged under the simplest conditions, and the template written as YAML with actions.
 */
import { emitObject } from '../../../constructs/helm/emit';
import { Conditions, literal, locateValue, mergeVariants, type Variant } from '../../../constructs/helm/template-tree';

const probe = { expr: '.Values.port', type: 'number' as const, value: 8080, other: 48123 };

describe('locating a value', () => {
  test('finds it as a whole number and inside a string', () => {
    const base = { spec: { port: 8080, args: ['--bind=:8080', '--other=8080x'] } };
    const changed = { spec: { port: 48123, args: ['--bind=:48123', '--other=8080x'] } };
    const places = locateValue(base, changed, probe, 'test');
    expect([...places.spans.keys()].sort()).toEqual(['["spec","args",0]', '["spec","port"]']);
  });

  test('refuses a setting that changes more than its text, naming the value and the field', () => {
    const base = { spec: { port: 8080, name: 'http' } };
    const changed = { spec: { port: 48123, name: 'https' } };
    expect(() => locateValue(base, changed, probe, 'test')).toThrow(/\.Values\.port.*spec\.name/);
  });
});

describe('conditions over switches', () => {
  const variants: Variant[] = [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ];
  const c = new Conditions(['.Values.a', '.Values.b']);
  const all = new Set(variants);
  const among = (indices: number[]) => new Set(indices.map((i) => variants[i]!));
  test.each([
    [[0, 1, 2, 3], undefined],
    [[1, 3], '.Values.a'],
    [[0, 2], 'not .Values.a'],
    [[3], 'and .Values.a .Values.b'],
    [[1, 2, 3], 'or .Values.a .Values.b'],
    [[0, 1, 3], 'or .Values.a (not .Values.b)'],
    [[1, 2], 'or (and .Values.a (not .Values.b)) (and (not .Values.a) .Values.b)'],
  ])('present in variants %j: %s', (present, expected) => {
    expect(c.when(among(present), all)).toBe(expected);
  });

  test('variants outside the domain do not matter', () => {
    expect(c.when(among([3]), among([2, 3]))).toBe('.Values.a');
  });
});

test('merged variants: shared items once, the others under their condition, written as a template', () => {
  const off: Variant = [false];
  const on: Variant = [true];
  const merged = mergeVariants(
    new Map([
      [off, literal({ kind: 'X', args: ['--a'], mode: 'off' })],
      [on, literal({ kind: 'X', args: ['--a', '--b'], mode: 'on', extra: { x: 1 } })],
    ]),
    new Conditions(['.Values.on']),
  );
  expect(emitObject(merged)).toBe(
    [
      'kind: X',
      'args:',
      '  - --a',
      '  {{- if .Values.on }}',
      '  - --b',
      '  {{- end }}',
      'mode: "{{ if .Values.on }}on{{ else }}off{{ end }}"',
      '{{- if .Values.on }}',
      'extra:',
      '  x: 1',
      '{{- end }}',
      '',
    ].join('\n'),
  );
});
