import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { JsonSchema } from '../../constructs';
import type { K8sObject } from './synth';

/**
 * Validates custom resources against a CRD's openAPIV3Schema offline, the way the API server
 * does for what a unit test can see: types, bounds, patterns, enums, required fields, and unknown
 * fields rejected (kubectl's default strict field validation). Defaults are applied first.
 */
export class CrdValidator {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(crd: K8sObject) {
    const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, code: { regExp: goPattern } });
    ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/);
    for (const v of crd.spec.versions) {
      this.validators.set(`${crd.spec.group}/${v.name}`, ajv.compile(toAjv(v.schema.openAPIV3Schema, true)));
    }
  }

  /** Returns a list of messages, each naming the offending field's path; empty when valid. */
  validate(resource: unknown): string[] {
    const apiVersion = (resource as { apiVersion?: string })?.apiVersion ?? '';
    const validate = this.validators.get(apiVersion);
    if (!validate) return [`apiVersion: ${JSON.stringify(apiVersion)} is not served by this CRD`];
    const copy = structuredClone(resource);
    return validate(copy) ? [] : (validate.errors ?? []).map(describe);
  }
}

/**
 * A CRD's pattern as the API server reads it (Go's RE2): a leading `(?i)` makes it
 * case-insensitive, which JavaScript writes as a flag (the Prometheus Operator's CRDs use it).
 */
function goPattern(pattern: string, flags: string): RegExp {
  const insensitive = /^(\^?)\(\?i\)/.exec(pattern);
  if (!insensitive) return new RegExp(pattern, flags);
  return new RegExp(`${insensitive[1]}${pattern.slice(insensitive[0].length)}`, `${flags}i`);
}
goPattern.code = 'goPattern';

function describe(e: ErrorObject): string {
  const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (e.keyword === 'required') return `${at ? `${at}.` : ''}${e.params.missingProperty}: Required value`;
  if (e.keyword === 'additionalProperties') return `${at ? `${at}.` : ''}${e.params.additionalProperty}: unknown field`;
  return `${at}: ${e.message}`;
}

/** Translates a structural Kubernetes schema into plain JSON Schema for Ajv. */
function toAjv(s: JsonSchema, root = false): object {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (
      k.startsWith('x-kubernetes-') ||
      k === 'nullable' ||
      k === 'properties' ||
      k === 'items' ||
      k === 'additionalProperties'
    )
      continue;
    if (k === 'format' && v !== 'date-time') continue;
    out[k] = v;
  }
  if (s['x-kubernetes-int-or-string']) {
    const { pattern, minimum, maxLength, ...rest } = out;
    return {
      ...rest,
      anyOf: [
        { type: 'integer', ...(minimum !== undefined ? { minimum } : {}) },
        { type: 'string', ...(pattern ? { pattern } : {}), ...(maxLength !== undefined ? { maxLength } : {}) },
      ],
    };
  }
  if (s.nullable && s.type) out.type = [s.type, 'null'];
  if (s.properties) {
    // metadata's schema only restricts some ObjectMeta fields (name): the others are allowed.
    out.properties = Object.fromEntries(
      Object.entries(s.properties).map(([k, v]) => [k, root && k === 'metadata' ? toAjv(v, true) : toAjv(v)]),
    );
    // kubectl validates strictly by default: unknown fields are errors, except in metadata (root).
    if (!s['x-kubernetes-preserve-unknown-fields'] && !root) out.additionalProperties = false;
  }
  if (s.items) out.items = toAjv(s.items);
  if (typeof s.additionalProperties === 'object') out.additionalProperties = toAjv(s.additionalProperties);
  return out;
}
