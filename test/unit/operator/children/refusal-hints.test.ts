/**
 * Each refusal the API server can give a child, as Kubernetes words it, gets the way through:
 * what a user does next, with the command where there is one.
 */
import { refusalHint } from '../../../../operator/runtime/children/refusal-hints';

const sts = { kind: 'StatefulSet', name: 'store', namespace: 'shop', exists: true };
const claim = { kind: 'PersistentVolumeClaim', name: 'data-store-0', namespace: 'shop', exists: true };

describe('the way through a refused child', () => {
  test("a StatefulSet's fixed fields: delete it keeping its pods; a claim template's other fields serve new claims only", () => {
    const said =
      "StatefulSet.apps \"store\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
    const hint = refusalHint(said, sts);
    expect(hint).toContain('kubectl delete statefulset store -n shop --cascade=orphan');
    expect(hint).toContain('none restarted');
    // A larger size is not this refusal's: the runtime grows claims itself (storage-growth.ts).
    expect(hint).toContain('other than a larger size, which the operator grows itself');
    expect(hint).toContain('used only for claims made after');
  });

  test('an immutable field of a child that exists: delete it and it is made again', () => {
    const said =
      'Deployment.apps "w" is invalid: spec.selector: Invalid value: {"matchLabels":{"a":"b"}}: field is immutable';
    expect(refusalHint(said, { kind: 'Deployment', name: 'w', namespace: 'web', exists: true })).toBe(
      'The API server does not change an immutable field in place: delete the Deployment (kubectl delete deployment w -n web) and the operator makes it again from the new spec',
    );
    // A create refused for another reason has nothing to delete.
    expect(refusalHint(said, { kind: 'Deployment', name: 'w', exists: false })).toBeUndefined();
  });

  test('a claim: it never shrinks; it changes nothing but its size after creation', () => {
    expect(
      refusalHint(
        'PersistentVolumeClaim "data-store-0" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
        claim,
      ),
    ).toContain('A claim never shrinks');
    expect(
      refusalHint(
        'PersistentVolumeClaim "data-store-0" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
        claim,
      ),
    ).toContain('only its requested size');
    expect(
      refusalHint(
        'persistentvolumeclaims "data-store-0" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
        claim,
      ),
    ).toContain('allowVolumeExpansion: true');
  });

  test("admission: a webhook's or a ValidatingAdmissionPolicy's denial names who refused and what to do", () => {
    expect(
      refusalHint(
        'admission webhook "policy.example.com" denied the request: images must come from registry.example.com',
        sts,
      ),
    ).toContain('An admission webhook of the cluster refused it');
    expect(
      refusalHint(
        "StatefulSet.apps \"store\" is forbidden: ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' denied request: at most 5 replicas",
        sts,
      ),
    ).toContain('A ValidatingAdmissionPolicy of the cluster refused it');
  });

  test('a refusal of no known case gets no made-up advice', () => {
    expect(
      refusalHint('Service "x" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535', sts),
    ).toBeUndefined();
  });
});
