import { k8s } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import type { ControllerDeclaration } from '../contract';
import { customResourceType } from '../contract';
import type { CustomResourceKind } from './kind';

/** The port the reconciler serves admission webhooks on (kubebuilder's). */
export const WEBHOOK_PORT = 9443;

/** The path a kind's hook is served at, kubebuilder's convention: `/validate-<group>-<version>-<kind>`. */
export function admissionPath(
  hook: 'validate' | 'mutate',
  kind: { readonly group: string; readonly kind: string },
  version: string,
): string {
  return `/${hook}-${kind.group.replace(/\./g, '-')}-${version}-${kind.kind.toLowerCase()}`;
}

/** The path the API server posts ConversionReviews to, for every kind (kubebuilder's). */
export const CONVERSION_PATH = '/convert';

/** The distinct kinds of these controllers whose versions need the `/convert` webhook. */
export function convertingKinds(controllers: readonly ControllerDeclaration[]): CustomResourceKind[] {
  return [...new Set(controllers.map((c) => c.for))].filter((k) => k.needsConversion);
}

/** What an operator whose controllers have admission hooks or converting kinds adds, by name. */
export interface WebhookPlan {
  readonly validating: readonly ControllerDeclaration[];
  readonly mutating: readonly ControllerDeclaration[];
  /** The kinds whose versions the webhook converts (their CRDs call it). */
  readonly converting: readonly CustomResourceKind[];
  /** The Service the API server calls. */
  readonly service: string;
  /** The Secret the reconciler keeps its serving certificate in (made empty: no secret in YAML). */
  readonly secret: string;
  /** The name of both webhook configurations. */
  readonly configuration: string;
  /** The reconciler's webhook flags. */
  readonly args: readonly string[];
}

/**
 * The plan for these controllers, or undefined when there is nothing to serve: admission hooks
 * only when asked for (they put the operator in the path of every write), conversion always (a
 * kind's other versions cannot be served without it).
 */
export function webhookPlan(
  controllers: readonly ControllerDeclaration[],
  name: string,
  namespace: string,
  options: { readonly admission: boolean },
): WebhookPlan | undefined {
  const validating = options.admission ? controllers.filter((c) => c.validate !== undefined) : [];
  const mutating = options.admission ? controllers.filter((c) => c.default !== undefined) : [];
  const converting = convertingKinds(controllers);
  if (validating.length === 0 && mutating.length === 0 && converting.length === 0) return undefined;
  const service = `${name}-webhook`;
  const secret = `${name}-webhook-cert`;
  const configuration = `${name}-webhook`;
  // The name the API server checks the certificate against when it calls a Service.
  const hosts = [`${service}.${namespace}.svc`];
  return {
    validating,
    mutating,
    converting,
    service,
    secret,
    configuration,
    args: [
      `--webhook-bind-address=:${WEBHOOK_PORT}`,
      `--webhook-cert-secret=${secret}`,
      `--webhook-cert-hosts=${hosts.join(',')}`,
      ...(validating.length + mutating.length > 0 ? [`--webhook-configuration=${configuration}`] : []),
    ],
  };
}

/** Where the objects go and what they carry. */
export interface WebhookObjectsProps {
  readonly plan: WebhookPlan;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly selector: Record<string, string>;
  /** Only resources in this namespace are reviewed. @default every namespace */
  readonly watchNamespace?: string;
  /** The reconciler's ServiceAccount. */
  readonly serviceAccount: string;
}

/**
 * The webhooks of an operator: the Service in front of the reconciler, the empty Secret its
 * certificate is kept in, the Validating/MutatingWebhookConfiguration (fail-closed, create and
 * update only, never for an object being deleted, 5 s), and the rights to keep the certificate
 * and the `caBundle` of the configurations and of the converting kinds' CRDs — those objects
 * only, by name. (The CRDs' `conversion` stanza is the CRD construct's.)
 */
export function addWebhookObjects(scope: Construct, clusterScope: Construct, props: WebhookObjectsProps): void {
  const { plan, namespace, labels } = props;
  new k8s.KubeService(scope, 'WebhookService', {
    metadata: { name: plan.service, namespace, labels },
    spec: {
      type: 'ClusterIP',
      selector: props.selector,
      ports: [{ name: 'webhook', port: 443, targetPort: k8s.IntOrString.fromString('webhook'), protocol: 'TCP' }],
    },
  });
  new k8s.KubeSecret(scope, 'WebhookCertificate', {
    metadata: { name: plan.secret, namespace, labels },
    type: 'Opaque',
  });
  const webhook = (decl: ControllerDeclaration, hook: 'validate' | 'mutate') => {
    const type = customResourceType(decl.for);
    const version = decl.for.storageVersion;
    return {
      name: `${hook === 'validate' ? 'v' : 'm'}${type.kind.toLowerCase()}.${type.group}`,
      clientConfig: {
        service: {
          name: plan.service,
          namespace,
          path: admissionPath(hook, type, version),
          port: 443,
        },
      },
      rules: [
        {
          apiGroups: [type.group],
          apiVersions: [version],
          operations: ['CREATE', 'UPDATE'],
          resources: [type.resource],
          scope: type.namespaced ? 'Namespaced' : 'Cluster',
        },
      ],
      // Requests for the kind's other versions are converted and sent here too.
      matchPolicy: 'Equivalent',
      // An object being deleted (its finalizers removed by hand, say) is never held up.
      matchConditions: [{ name: 'not-being-deleted', expression: '!has(object.metadata.deletionTimestamp)' }],
      namespaceSelector: props.watchNamespace
        ? {
            matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [props.watchNamespace] }],
          }
        : undefined,
      failurePolicy: 'Fail',
      sideEffects: 'None',
      timeoutSeconds: 5,
      admissionReviewVersions: ['v1'],
    };
  };
  const configurationRules: { apiGroups: string[]; resources: string[]; resourceNames: string[]; verbs: string[] }[] =
    [];
  if (plan.converting.length > 0) {
    const crds = plan.converting.map((k) => k.crdName);
    configurationRules.push(
      // The CRDs' conversion caBundle.
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: crds,
        verbs: ['get', 'patch'],
      },
      // Trimming status.storedVersions once the objects are rewritten in the storage version.
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions/status'],
        resourceNames: crds,
        verbs: ['patch'],
      },
    );
  }
  if (plan.validating.length > 0) {
    new k8s.KubeValidatingWebhookConfiguration(clusterScope, 'ValidatingWebhooks', {
      metadata: { name: plan.configuration, labels },
      webhooks: plan.validating.map((d) => webhook(d, 'validate')),
    });
    configurationRules.push({
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [plan.configuration],
      verbs: ['get', 'patch'],
    });
  }
  if (plan.mutating.length > 0) {
    new k8s.KubeMutatingWebhookConfiguration(clusterScope, 'MutatingWebhooks', {
      metadata: { name: plan.configuration, labels },
      webhooks: plan.mutating.map((d) => ({ ...webhook(d, 'mutate'), reinvocationPolicy: 'Never' })),
    });
    configurationRules.push({
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['mutatingwebhookconfigurations'],
      resourceNames: [plan.configuration],
      verbs: ['get', 'patch'],
    });
  }
  const subjects = [{ kind: 'ServiceAccount', name: props.serviceAccount, namespace }];
  const role = new k8s.KubeRole(scope, 'WebhookCertificateRole', {
    metadata: { name: `${plan.secret}-role`, namespace, labels },
    rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [plan.secret], verbs: ['get', 'patch'] }],
  });
  new k8s.KubeRoleBinding(scope, 'WebhookCertificateRoleBinding', {
    metadata: { name: `${plan.secret}-rolebinding`, namespace, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
    subjects,
  });
  const clusterRole = new k8s.KubeClusterRole(clusterScope, 'WebhookConfigurationRole', {
    metadata: { name: `${plan.configuration}-configuration-role`, labels },
    rules: configurationRules,
  });
  new k8s.KubeClusterRoleBinding(clusterScope, 'WebhookConfigurationRoleBinding', {
    metadata: { name: `${plan.configuration}-configuration-rolebinding`, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole.name },
    subjects,
  });
}
