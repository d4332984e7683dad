import { t } from '../../../constructs';
import { invalidSpecs, UNKNOWN_FIELD, wrongValues } from '../../../testing/conformance/invalid-specs';

const schema = t.object({
  engine: t.enum(['postgresql', 'mysql'], { required: true, immutable: true, description: 'The engine.' }),
  instances: t.integer({ minimum: 1, maximum: 9, default: 1, description: 'How many.' }),
  name: t.string({ pattern: '^[a-z]+$', maxLength: 8, description: 'A name.' }),
  storage: t.object(
    { size: t.quantity({ required: true, description: 'How much.' }) },
    { required: true, description: 'Where.' },
  ),
  tls: t.object({ required: t.boolean({ description: 'Only TLS.' }) }, { description: 'Not in the example.' }),
}).json;
const example = { engine: 'postgresql', name: 'orders', storage: { size: '1Gi' } };
const live = { ...example, instances: 1 };

/** The one field (by dotted path) in which `variant` differs from `base`, as the variants claim. */
function changedPaths(base: unknown, variant: unknown, at = 'spec'): string[] {
  if (JSON.stringify(base) === JSON.stringify(variant)) return [];
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  // A list of as many items: the item that differs (a list of another length changed as a whole).
  if (Array.isArray(base) && Array.isArray(variant) && base.length === variant.length)
    return base.flatMap((item: unknown, i) => changedPaths(item, variant[i], `${at}[${i}]`));
  if (!isObject(base) || !isObject(variant)) return [at];
  const keys = new Set([...Object.keys(base), ...Object.keys(variant)]);
  return [...keys].flatMap((k) => changedPaths(base[k], variant[k], `${at}.${k}`));
}

describe('invalidSpecs', () => {
  const variants = invalidSpecs(schema, example, live);

  test('each variant changes exactly the field it names, from the example (or the live object, for an update)', () => {
    expect(variants.length).toBeGreaterThan(10);
    for (const v of variants) expect(changedPaths(v.update ? live : example, v.spec)).toEqual([v.field]);
  });

  test('a field unknown to the schema, each field of the wrong type, and the bounds, pattern and enum each missed', () => {
    const by = (field: string) => variants.filter((v) => v.field === field && !v.update).map((v) => v.what);
    expect(by(`spec.${UNKNOWN_FIELD}`)).toEqual(['a field its schema does not have (a misspelt one)']);
    expect(by('spec.instances')).toEqual([
      'a string where an integer is',
      '0, below its minimum 1',
      '10, above its maximum 9',
    ]);
    expect(by('spec.engine')).toEqual([
      'a number where a string is',
      expect.stringMatching(/^"not-one-of-them", not one of \["postgresql","mysql"\]$/),
    ]);
    expect(by('spec.name')).toEqual([
      'a number where a string is',
      'longer than its 8 characters at most',
      expect.stringMatching(/^"", which its pattern \^\[a-z\]\+\$ misses$/),
    ]);
    // A quantity: an int-or-string with a pattern and a length.
    expect(by('spec.storage.size')).toEqual([
      'a boolean where an integer or a string is',
      'longer than its 64 characters at most',
      expect.stringMatching(/^"", which its pattern .* misses$/),
    ]);
    // An object the example has no value for is not walked into (its fields stay out of it).
    expect(by('spec.tls')).toEqual(['a string where an object is']);
    expect(variants.some((v) => v.field === 'spec.tls.required')).toBe(false);
  });

  test('an immutable field is changed, as an update, to another value its schema takes', () => {
    expect(variants.filter((v) => v.update)).toEqual([
      {
        field: 'spec.engine',
        what: 'an immutable field changed ("postgresql" → "mysql")',
        spec: { ...live, engine: 'mysql' },
        update: true,
      },
    ]);
  });

  test('the values refused are refused by the schema they are made from', () => {
    const pattern = schema.properties!.name!.pattern!;
    for (const { value } of wrongValues(schema.properties!.name!))
      expect(typeof value !== 'string' || value.length > 8 || !new RegExp(pattern).test(value)).toBe(true);
    const bounds = schema.properties!.instances!;
    for (const { value } of wrongValues(bounds))
      expect(typeof value !== 'number' || value < bounds.minimum! || value > bounds.maximum!).toBe(true);
  });
});

describe('invalidSpecs in lists', () => {
  const listSchema = t.object({
    members: t.array(
      t.object({
        name: t.string({ required: true, maxLength: 10, description: 'Its name.' }),
        port: t.integer({ minimum: 1, description: 'Its port.' }),
      }),
      { minItems: 1, maxItems: 3, description: 'The members.' },
    ),
    tags: t.array(t.string({ pattern: '^[a-z]+$', description: 'A tag.' }), { description: 'Tags.' }),
    empty: t.array(t.string({ description: 'Never set.' }), { maxItems: 1, description: 'Not in the example.' }),
  }).json;
  const listExample = { members: [{ name: 'a', port: 1 }, { name: 'b' }], tags: ['x'] };
  const variants = invalidSpecs(listSchema, listExample);
  const by = (field: string) => variants.filter((v) => v.field === field).map((v) => v.what);

  test("the first item's fields of each list the example sets, named as the API server names them, and each list's count past its bounds", () => {
    for (const v of variants) expect(changedPaths(listExample, v.spec)).toEqual([v.field]);
    expect(by('spec.members[0].name')).toEqual(['a number where a string is', 'longer than its 10 characters at most']);
    expect(by('spec.members[0].port')).toEqual(['a string where an integer is', '0, below its minimum 1']);
    expect(by('spec.members[0]')).toEqual(['a string where an object is']);
    expect(by('spec.members')).toEqual([
      'a string where a list is',
      '4 items, more than its 3 at most',
      '0 items, fewer than its 1 at least',
    ]);
    expect(by('spec.tags[0]')).toEqual(['a number where a string is', expect.stringMatching(/which its pattern/)]);
    // Only the first item is varied; a list the example does not set is not walked into.
    expect(variants.some((v) => v.field.startsWith('spec.members[1]'))).toBe(false);
    expect(by('spec.empty')).toEqual(['a string where a list is']);
  });

  test("a list variant keeps the example's other items, and its too-long list repeats the first item", () => {
    const tooMany = variants.find((v) => v.what.startsWith('4 items'))!.spec as typeof listExample;
    expect(tooMany.members).toEqual(Array.from({ length: 4 }, () => ({ name: 'a', port: 1 })));
    const itemChanged = variants.find((v) => v.field === 'spec.members[0].port')!.spec as typeof listExample;
    expect(itemChanged.members[1]).toEqual({ name: 'b' });
    expect(itemChanged.tags).toEqual(['x']);
  });
});

describe('invalidSpecs in maps', () => {
  const mapSchema = t.object({
    labels: t.map(t.string({ maxLength: 3, description: 'A value.' }), { description: 'Labels.' }),
    limits: t.map(t.object({ max: t.integer({ maximum: 5, description: 'Its most.' }) }), { description: 'Limits.' }),
    unset: t.map(t.integer({ minimum: 0, description: 'Never set.' }), { description: 'Not in the example.' }),
  }).json;
  const mapExample = { labels: { team: 'ab', tier: 'x' }, limits: { a: { max: 1 } } };
  const variants = invalidSpecs(mapSchema, mapExample);
  const by = (field: string) => variants.filter((v) => v.field === field).map((v) => v.what);

  test("the value of each map's first key the example sets, named as the API server names it (its key a field's name), and into it when an object", () => {
    for (const v of variants) expect(changedPaths(mapExample, v.spec)).toEqual([v.field]);
    expect(by('spec.labels.team')).toEqual(['a number where a string is', 'longer than its 3 characters at most']);
    expect(by('spec.limits.a')).toEqual(['a string where an object is']);
    expect(by('spec.limits.a.max')).toEqual(['a string where an integer is', '6, above its maximum 5']);
    // Only the first key; a map the example does not set is varied as a whole, never its values.
    expect(variants.some((v) => v.field.startsWith('spec.labels.tier'))).toBe(false);
    expect(by('spec.unset')).toEqual(['a string where an object is']);
    expect(variants.some((v) => v.field.startsWith('spec.unset.'))).toBe(false);
  });

  test("a map variant keeps the example's other keys", () => {
    const changed = variants.find((v) => v.field === 'spec.labels.team')!.spec as typeof mapExample;
    expect(changed.labels.tier).toBe('x');
    expect(changed.limits).toEqual({ a: { max: 1 } });
  });
});
