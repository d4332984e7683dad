import { type k8s } from 'cdk8s-plus-27';

/** The uid/gid of the distroless "nonroot" user, which the reconciler image runs as. */
export const NON_ROOT_UID = 65532;

/** Pod-level settings that satisfy the `restricted` Pod Security Standard. */
export function restrictedPodSecurityContext(uid = NON_ROOT_UID): k8s.PodSecurityContext {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/** Container-level settings that satisfy the `restricted` Pod Security Standard. */
export function restrictedContainerSecurityContext(
  options: { readOnlyRootFilesystem?: boolean } = {},
): k8s.SecurityContext {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem: options.readOnlyRootFilesystem ?? true,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
