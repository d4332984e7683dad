import { conditionsSchema, type Static, t } from '../../../constructs';

describe('the schema builder', () => {
  test('required and defaulted fields; required lists only fields without a default', () => {
    const s = t.object({
      size: t.integer({ required: true, minimum: 1 }),
      image: t.string({ default: 'x' }),
      note: t.string(),
    });
    expect(s.json).toEqual({
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: 1 },
        image: { type: 'string', default: 'x' },
        note: { type: 'string' },
      },
      required: ['size'],
    });
    // Type level: present fields are not optional, others are.
    const v: Static<typeof s> = { size: 1, image: 'x' };
    expect(v.note).toBeUndefined();
  });

  test('enums, arrays, maps, quantities and opaque objects are structural', () => {
    expect(t.enum(['a', 'b'] as const).json).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(t.array(t.string(), { listType: 'set' }).json).toEqual({
      type: 'array',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
    });
    expect(t.map(t.string()).json).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(t.quantity().json['x-kubernetes-int-or-string']).toBe(true);
    expect(t.opaqueObject().json).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(() => t.enum([] as const)).toThrow(/at least one allowed value/);
  });

  test('the quantity pattern accepts Kubernetes quantities and nothing else', () => {
    const re = new RegExp(t.quantity().json.pattern!);
    for (const ok of ['10Gi', '500Mi', '1', '0.5', '100m', '1e3', '2T'])
      expect({ ok, matches: re.test(ok) }).toEqual({ ok, matches: true });
    for (const bad of ['10GB', 'ten', '', '1 Gi', 'Gi'])
      expect({ bad, matches: re.test(bad) }).toEqual({ bad, matches: false });
  });

  test('conditions are a list map keyed by type', () => {
    const c = conditionsSchema().json;
    expect(c['x-kubernetes-list-type']).toBe('map');
    expect(c['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect(c.items?.properties?.status?.enum).toEqual(['True', 'False', 'Unknown']);
  });
});
