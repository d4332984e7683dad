/**
 * The checks a custom kind's props pass when it is made: names, versions, conversions, and the
 * scale and printer-column paths against the schema of every version. Each failure says what to
 * change, so a kind that would make a broken CRD never synthesizes.
 */
import type { CustomResourceKind } from './kind';
import { spokeRoundTripProblems } from './conversion';
import type { JsonSchema } from './schema';
import { assertStructural } from './structural';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const LOWER_NAME = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/** One step of a printer column's path: `.field`, `[0]` or `[*]`, or `[?(@.field=="value")]`. */
const COLUMN_STEP =
  /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z_$][\w$]*)\s*==\s*(?:"[^"]*"|'[^']*')\)\])/;

export function validateKind(kind: CustomResourceKind): void {
  const p = kind.props;
  const where = `custom kind ${JSON.stringify(p.kind)}`;
  if (!DNS_SUBDOMAIN.test(p.group)) {
    throw new Error(
      `${where}: group ${JSON.stringify(p.group)} must be a lower-case DNS subdomain with at least one dot, e.g. "cache.example.com"`,
    );
  }
  if (!KIND.test(p.kind)) {
    throw new Error(`${where}: kind must be CamelCase starting with an upper-case letter, e.g. "Memcached"`);
  }
  for (const [field, value] of [
    ['plural', kind.plural],
    ['singular', kind.singular],
  ] as const) {
    if (!LOWER_NAME.test(value)) {
      throw new Error(
        `${where}: ${field} ${JSON.stringify(value)} must be lower-case letters, digits and dashes; set it explicitly`,
      );
    }
  }
  validateVersions(kind, where);
  validateConversions(kind, where);
  for (const name of p.shortNames ?? []) {
    if (!/^[a-z][a-z0-9]*$/.test(name)) {
      throw new Error(`${where}: short name ${JSON.stringify(name)} must be lower-case letters and digits, e.g. "mc"`);
    }
  }
  if (
    p.maxNameLength !== undefined &&
    !(Number.isInteger(p.maxNameLength) && p.maxNameLength >= 1 && p.maxNameLength <= 253)
  ) {
    throw new Error(`${where}: maxNameLength must be a whole number from 1 to 253, got ${p.maxNameLength}`);
  }
  if (p.spec.json.type !== 'object' || p.status.json.type !== 'object') {
    throw new Error(`${where}: spec and status must be object schemas; build them with t.object({...})`);
  }
  validatePaths(kind, where);
}

/** At least one version, each a Kubernetes API version, none twice, the storage version among them. */
function validateVersions(kind: CustomResourceKind, where: string): void {
  const { versions } = kind.props;
  if (versions.length === 0) {
    throw new Error(`${where}: give at least one version, e.g. versions: ['v1alpha1']`);
  }
  for (const v of versions) {
    if (!VERSION.test(v)) {
      throw new Error(
        `${where}: version ${JSON.stringify(v)} is not a Kubernetes API version; use forms like v1, v1beta1, v2alpha3`,
      );
    }
  }
  if (new Set(versions).size !== versions.length) {
    throw new Error(`${where}: versions ${JSON.stringify(versions)} list one version twice`);
  }
  if (!versions.includes(kind.storageVersion)) {
    throw new Error(
      `${where}: storageVersion ${JSON.stringify(kind.storageVersion)} must be one of the served versions ${JSON.stringify(versions)}`,
    );
  }
}

/** Conversions only for served versions other than the storage version, each with an object spec and sound examples. */
function validateConversions(kind: CustomResourceKind, where: string): void {
  for (const [version, spoke] of Object.entries(kind.conversions)) {
    if (!spoke) continue;
    if (!kind.versions.includes(version))
      throw new Error(
        `${where}: conversions name ${JSON.stringify(version)}, which is not among the versions ${JSON.stringify(kind.versions)}`,
      );
    if (version === kind.storageVersion)
      throw new Error(
        `${where}: ${version} is the storage version, the hub the others convert to; it needs no conversion`,
      );
    if (spoke.spec.json.type !== 'object')
      throw new Error(`${where}: the spec of ${version} must be an object schema; build it with t.object({...})`);
    for (const example of spoke.examples ?? []) {
      const problems = [
        ...kind.specViolations(example, version).map((v) => `as ${version}: ${v}`),
        ...spokeRoundTripProblems(kind, version, example, (s, v) => kind.specViolations(s, v)),
      ];
      if (problems.length > 0)
        throw new Error(
          `${where}: the ${version} example ${JSON.stringify(example)} does not convert cleanly: ${problems.join('; ')}`,
        );
    }
  }
}

/** A structural schema at every version, and scale and printer-column paths that name fields of each. */
function validatePaths(kind: CustomResourceKind, where: string): void {
  for (const version of kind.versions) {
    validatePathsAt(kind, kind.versions.length > 1 ? `${where} at ${version}` : where, version);
  }
}

function validatePathsAt(kind: CustomResourceKind, where: string, version: string): void {
  const p = kind.props;
  const schema = kind.openApiSchema(version);
  assertStructural(schema, where);
  const scale = kind.scale;
  if (scale) {
    for (const [what, path, type, prefix] of [
      ['scale.specReplicasPath', scale.specReplicasPath, 'integer', '.spec.'],
      ['scale.statusReplicasPath', scale.statusReplicasPath, 'integer', '.status.'],
      ['scale.labelSelectorPath', scale.labelSelectorPath, 'string', '.status.'],
    ] as const)
      assertPath(`custom kind ${JSON.stringify(kind.kind)}: ${what}`, schema, path, type, prefix);
  }
  for (const col of p.printerColumns ?? []) {
    if (col.jsonPath === '.metadata.creationTimestamp') continue;
    assertColumnPath(kind, schema, col.jsonPath, `printer column ${JSON.stringify(col.name)}`);
  }
}

/**
 * Checks a printer column's JSONPath: fields of the schema, with the array steps kubectl
 * evaluates — an index (`[0]`), all items (`[*]`), or a filter on a field of the items
 * (`[?(@.type=="Available")]`, how a column shows a condition).
 */
// eslint-disable-next-line complexity -- walks a JSONPath segment by segment: a branch per segment form (field, index, filter), each with its message
function assertColumnPath(kind: CustomResourceKind, schema: JsonSchema, path: string, what: string): void {
  const where = `custom kind ${JSON.stringify(kind.kind)}: ${what}`;
  const fail = (why: string): never => {
    throw new Error(`${where}: path ${JSON.stringify(path)} ${why}`);
  };
  if (!path.startsWith('.')) fail('must start with "."');
  let nodeAt: JsonSchema | undefined = schema;
  let rest = path;
  while (rest) {
    const step = COLUMN_STEP.exec(rest);
    if (!step) fail(`cannot be read at ${JSON.stringify(rest)}; use .field, [0], [*] or [?(@.field=="value")]`);
    const [whole = '', field, index, filterField] = step ?? [];
    rest = rest.slice(whole.length);
    if (field !== undefined) {
      nodeAt = nodeAt?.properties?.[field];
      if (!nodeAt) fail(`names no field ${JSON.stringify(field)} of the schema; add the field or fix the path`);
      continue;
    }
    if (nodeAt?.type !== 'array' || !nodeAt.items) fail(`applies ${whole} to a field that is not a list`);
    nodeAt = nodeAt?.items;
    if (index === undefined && filterField !== undefined && !nodeAt?.properties?.[filterField]) {
      fail(`filters on ${JSON.stringify(filterField)}, which the list's items do not have`);
    }
  }
}

/** Checks that a `.a.b.c` path names a field of the schema (of the given type, when given). */
function assertPath(
  where: string,
  schema: JsonSchema,
  path: string,
  type: JsonSchema['type'] | undefined,
  prefix: string,
): void {
  if (!path.startsWith(prefix)) {
    throw new Error(`${where}: path ${JSON.stringify(path)} must start with "${prefix}"`);
  }
  let nodeAt: JsonSchema | undefined = schema;
  for (const part of path.slice(1).split('.')) {
    nodeAt = nodeAt.properties?.[part];
    if (!nodeAt) {
      throw new Error(
        `${where}: path ${JSON.stringify(path)} names no field of the schema; add the field or fix the path`,
      );
    }
  }
  if (type && nodeAt.type !== type) {
    throw new Error(
      `${where}: field ${JSON.stringify(path)} must be of type ${type}, but the schema says ${nodeAt.type ?? 'nothing'}`,
    );
  }
}
