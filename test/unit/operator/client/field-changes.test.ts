/**
 * The fields of our own apply that a write would change (what `plan` counts): only real changes —
 * a field the API server dropped because it was empty (omitempty) on both sides is no change.
 */
import type { KubeObject } from '../../../../constructs/contract';
import { appliedFieldChanges } from '../../../../operator/runtime/client/field-changes';

const MANAGER = 'cdk8s-operator-kit';

/** A Service as stored: `externalIPs: []` applied (so owned), but dropped by the server. */
function service(labels: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'web',
      namespace: 'ns',
      labels,
      managedFields: [
        {
          manager: MANAGER,
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': Object.fromEntries(Object.keys(labels).map((k) => [`f:${k}`, {}])) },
            'f:spec': { 'f:externalIPs': {}, 'f:ports': {}, 'f:selector': {} },
          },
        },
      ],
    },
    spec: { ports: [{ port: 80 }], selector: { app: 'web' } },
  };
}

describe('the fields our apply would change', () => {
  test('a label added: that label alone, not the fields the server dropped on both sides', () => {
    expect(appliedFieldChanges(service({ app: 'web' }), service({ app: 'web', team: 'a' }), MANAGER)).toEqual([
      { field: 'metadata.labels.team', change: 'added' },
    ]);
  });

  test('no change: nothing, dropped fields included', () => {
    expect(appliedFieldChanges(service({ app: 'web' }), service({ app: 'web' }), MANAGER)).toEqual([]);
  });

  test('a label removed and one changed', () => {
    expect(appliedFieldChanges(service({ app: 'web', team: 'a' }), service({ app: 'api' }), MANAGER)).toEqual([
      { field: 'metadata.labels.app', change: 'changed' },
      { field: 'metadata.labels.team', change: 'removed' },
    ]);
  });
});
