/**
 * Admission reviews (admission.k8s.io/v1) for the declarations' `validate` and `default` hooks:
 * which hook a path names, and the answer to one review. Pure but for the reads the hooks make.
 */
import type {
  AdmissionContext,
  ControllerDeclaration,
  CustomResourceObject,
  KubeObject,
} from '../../../constructs/contract';
import { customResourceType } from '../../../constructs/contract';
import { admissionPath } from '../../../constructs/contract/webhook-paths';

/** What a review's request carries that the hooks read. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly operation: string;
  /** The resource under review: one of the kinds the hooks are declared for. */
  readonly object?: CustomResourceObject;
  readonly oldObject?: CustomResourceObject;
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: {
    readonly code: number;
    readonly reason: string;
    readonly message: string;
    readonly details: { readonly causes: readonly { field: string; message: string; reason: string }[] };
  };
  readonly patchType?: 'JSONPatch';
  readonly patch?: string;
}

/** The hooks served, by path. */
export function admissionRoutes(
  decls: readonly ControllerDeclaration[],
): Map<string, { hook: 'validate' | 'mutate'; decl: ControllerDeclaration }> {
  const routes = new Map<string, { hook: 'validate' | 'mutate'; decl: ControllerDeclaration }>();
  for (const decl of decls) {
    for (const version of decl.for.versions) {
      if (decl.validate) routes.set(admissionPath('validate', decl.for, version), { hook: 'validate', decl });
      if (decl.default) routes.set(admissionPath('mutate', decl.for, version), { hook: 'mutate', decl });
    }
  }
  return routes;
}

/**
 * The answer to one review. A `validate` hook's problems become a 422 Invalid naming each field
 * (what `kubectl` shows after "denied the request:"); a `default` hook's spec becomes a JSON
 * patch of `/spec`. Anything but CREATE and UPDATE is allowed untouched.
 */
export function review(
  hook: 'validate' | 'mutate',
  decl: ControllerDeclaration,
  request: AdmissionRequest,
  context: (object: KubeObject) => Omit<AdmissionContext, 'operation' | 'old'>,
): AdmissionResponse {
  const { uid, operation, object } = request;
  if ((operation !== 'CREATE' && operation !== 'UPDATE') || !object) return { uid, allowed: true };
  if (hook === 'mutate') {
    const spec: unknown = decl.default?.(object);
    if (spec === undefined || JSON.stringify(spec) === JSON.stringify(object.spec)) return { uid, allowed: true };
    const op = object.spec === undefined ? 'add' : 'replace';
    const patch = Buffer.from(JSON.stringify([{ op, path: '/spec', value: spec }])).toString('base64');
    return { uid, allowed: true, patchType: 'JSONPatch', patch };
  }
  const problems = decl.validate?.(object, { ...context(object), operation, old: request.oldObject }) ?? [];
  if (problems.length === 0) return { uid, allowed: true };
  const type = customResourceType(decl.for);
  const message = `${type.kind}.${type.group} ${JSON.stringify(object.metadata.name)} is invalid: ${problems
    .map((p) => `${p.field}: ${p.message}`)
    .join('; ')}`;
  return {
    uid,
    allowed: false,
    status: {
      code: 422,
      reason: 'Invalid',
      message,
      details: { causes: problems.map((p) => ({ field: p.field, message: p.message, reason: 'FieldValueInvalid' })) },
    },
  };
}
