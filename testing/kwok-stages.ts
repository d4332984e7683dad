/**
 * The kwok stages the control plane runs (files under kwok's `kustomize/stage`), and the SHA-256
 * of each at the kwok release the harness pins: a download of them is checked against these. They
 * were taken from kwok's Go module, which the Go checksum database vouches for
 * (sigs.k8s.io/kwok v0.8.0 h1:OTIOTwgROqPMovcTwxICx2eYQ4AwLpSx5EpjbDKF4SQ=).
 */
export const KWOK_STAGES = [
  'node/fast/node-initialize.yaml',
  'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml',
  'pod/fast/pod-ready.yaml',
  'pod/fast/pod-complete.yaml',
  'pod/fast/pod-delete.yaml',
  // Opt-in per pod, by label: a running container fails, the pod becoming Failed (as a pod that is
  // not restarted does). For a crash loop as a kubelet shows it, see CRASH_LOOP_LABEL.
  'pod/chaos/pod-container-running-failed.yaml',
  'volume/fast/pv-bind.yaml',
  'volume/fast/pv-delete.yaml',
  // Not volume/fast/pvc-provision.yaml: kwok-claim-provision-stage.yaml binds claims in its place,
  // each patch naming the claim's uid (why: that file's head).
  'volume/fast/pvc-delete.yaml',
] as const;

/**
 * The harness's own stages (files beside this module), run by kwok after its own: failures a test
 * makes by a label (crash loop, image pull), claims bound by uid, and claims that grow.
 */
export const HARNESS_KWOK_STAGES = [
  'kwok-crash-loop-stage.yaml',
  'kwok-image-pull-failure-stage.yaml',
  'kwok-claim-provision-stage.yaml',
  'kwok-volume-expansion-stages.yaml',
] as const;

/** kwok's default StorageClass, applied to the cluster (not a stage). */
export const KWOK_STORAGE_CLASS = 'volume/fast/storage-class.yaml';

/** SHA-256 of each file above, by kwok version. */
export const KWOK_STAGE_SHA256: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'v0.8.0': {
    'node/fast/node-initialize.yaml': 'bb38f752d90248528b579a0ae8f0f660ff3428457eb5c1ebe6345c3246cc7ee5',
    'node/heartbeat-with-lease/node-heartbeat-with-lease.yaml':
      '9becfc93321222915bd1ec8ab103fe769afe4b23e1386bf40553deb02e332c9c',
    'pod/fast/pod-ready.yaml': '4d04a22c1b9dc6adcd4da90b32ce85687ba0058e15ca1eebcfa7cd64201d4148',
    'pod/fast/pod-complete.yaml': '86b800597419abbd7d8c43b0dfc4782643cfcfcfc8ac617f1e79e4e3a68533b2',
    'pod/fast/pod-delete.yaml': 'a83bc287bfc7a4f1e3748e01761186128a4042e38b304195e984111ce5626cef',
    'pod/chaos/pod-container-running-failed.yaml': '7c63c233250ae74b1f9afb28208be3fff452c24058c2d6b08721db0cc64f9026',
    'volume/fast/pv-bind.yaml': '747eba6defd437d6d1bdf847ef744fb8fc7527f4ba8d8c27656025e0376fb9ce',
    'volume/fast/pv-delete.yaml': '4746963af0734ea8175b4562042075848412d8888f2345d8afa1a3058160d52d',
    'volume/fast/pvc-delete.yaml': '554cbb324b752baf8c72d9f2fa973c0825fd3eb67cf30b8e871a4b6c4509d7a1',
    'volume/fast/storage-class.yaml': '113866dbd7e34db57db60b9b67f7dde6b3dee210fb550c0bb9dca00a1eb6d17c',
  },
};
