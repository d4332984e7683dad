import { ApiObject } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import type { Construct } from 'constructs';
import type { ControllerDeclaration } from './controller-declaration';
import { admissionPath, convertingKinds, WEBHOOK_PORT_NAME } from '../contract/webhook-paths';
import { reconcilerFlag } from '../contract/reconciler-flags';
import { customResourceType } from '../contract';
import type { CustomResourceKind } from './kind';

/** The port the reconciler serves admission webhooks on (kubebuilder's). */
export const WEBHOOK_PORT = 9443;

/** Where the reconciler reads a certificate cert-manager keeps in a Secret (kubebuilder's path). */
export const MOUNTED_CERTIFICATE_DIR = '/tmp/k8s-webhook-server/serving-certs';

/** The annotation cert-manager's cainjector reads to write a Certificate's CA into a `caBundle`. */
export const INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

/** The cert-manager issuer that signs the webhooks' certificate. */
export interface CertManagerIssuer {
  readonly name: string;
  /** @default 'Issuer' (in the operator's namespace) */
  readonly kind?: 'Issuer' | 'ClusterIssuer';
  /** @default 'cert-manager.io' */
  readonly group?: string;
}

/**
 * Have cert-manager issue the webhooks' serving certificate and its cainjector keep every
 * `caBundle` (the webhook configurations', the converting CRDs'), as kubebuilder's default
 * config does. cert-manager must be installed in the cluster.
 */
export interface CertManagerCertificate {
  /** Who signs it. @default a self-signed Issuer made in the operator's namespace */
  readonly issuer?: CertManagerIssuer;
}

/** What cert-manager is asked for, when it keeps the certificate. */
export interface CertManagerPlan {
  /** The Certificate's name, in the operator's namespace (`inject-ca-from` names it). */
  readonly certificate: string;
  readonly issuer: Required<CertManagerIssuer>;
  /** Whether the operator makes that (self-signed) Issuer itself. */
  readonly ownIssuer: boolean;
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
  /** The certificate is cert-manager's (mounted from `secret`), not the reconciler's own. */
  readonly certManager?: CertManagerPlan;
  /** The annotations of the objects that trust the certificate (cert-manager's CA injection). */
  readonly trustAnnotations: Record<string, string>;
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
  options: { readonly admission: boolean; readonly certManager?: CertManagerCertificate },
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
  const certManager = options.certManager ? certManagerPlan(name, options.certManager) : undefined;
  return {
    validating,
    mutating,
    converting,
    service,
    secret,
    configuration,
    certManager,
    trustAnnotations: certManager ? { [INJECT_CA_FROM]: `${namespace}/${certManager.certificate}` } : {},
    args: [
      reconcilerFlag('webhook-bind-address', `:${WEBHOOK_PORT}`),
      ...(certManager
        ? // cert-manager writes the Secret and cainjector the caBundles; the reconciler only reads.
          [reconcilerFlag('webhook-cert-path', MOUNTED_CERTIFICATE_DIR)]
        : [
            reconcilerFlag('webhook-cert-secret', secret),
            reconcilerFlag('webhook-cert-hosts', hosts.join(',')),
            ...(validating.length + mutating.length > 0
              ? [reconcilerFlag('webhook-configuration', configuration)]
              : []),
          ]),
    ],
  };
}

function certManagerPlan(name: string, options: CertManagerCertificate): CertManagerPlan {
  const issuer = options.issuer;
  return {
    certificate: `${name}-serving-cert`,
    issuer: {
      name: issuer?.name ?? `${name}-selfsigned-issuer`,
      kind: issuer?.kind ?? 'Issuer',
      group: issuer?.group ?? 'cert-manager.io',
    },
    ownIssuer: issuer === undefined,
  };
}

/** Where the objects go and what they carry. */
export interface WebhookObjectsProps {
  readonly plan: WebhookPlan;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly selector: Record<string, string>;
  /** Only resources in these namespaces are reviewed. @default every namespace */
  readonly watchNamespaces?: readonly string[];
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
      ports: [
        {
          name: WEBHOOK_PORT_NAME,
          port: 443,
          targetPort: k8s.IntOrString.fromString(WEBHOOK_PORT_NAME),
          protocol: 'TCP',
        },
      ],
    },
  });
  if (plan.certManager) addCertManagerCertificate(scope, plan, plan.certManager, namespace, labels);
  else {
    new k8s.KubeSecret(scope, 'WebhookCertificate', {
      metadata: { name: plan.secret, namespace, labels },
      type: 'Opaque',
    });
  }
  if (plan.validating.length > 0) {
    new k8s.KubeValidatingWebhookConfiguration(clusterScope, 'ValidatingWebhooks', {
      metadata: { name: plan.configuration, labels, annotations: annotations(plan) },
      webhooks: plan.validating.map((d) => admissionWebhook(d, 'validate', props)),
    });
  }
  if (plan.mutating.length > 0) {
    new k8s.KubeMutatingWebhookConfiguration(clusterScope, 'MutatingWebhooks', {
      metadata: { name: plan.configuration, labels, annotations: annotations(plan) },
      webhooks: plan.mutating.map((d) => ({ ...admissionWebhook(d, 'mutate', props), reinvocationPolicy: 'Never' })),
    });
  }
  addTrustRbac(scope, clusterScope, props);
}

/** One kind's admission webhook: fail-closed, create and update only, never for an object being deleted. */
function admissionWebhook(decl: ControllerDeclaration, hook: 'validate' | 'mutate', props: WebhookObjectsProps) {
  const type = customResourceType(decl.for);
  const version = decl.for.storageVersion;
  return {
    name: `${hook === 'validate' ? 'v' : 'm'}${type.kind.toLowerCase()}.${type.group}`,
    clientConfig: {
      service: {
        name: props.plan.service,
        namespace: props.namespace,
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
    namespaceSelector: props.watchNamespaces
      ? {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'In', values: [...props.watchNamespaces] },
          ],
        }
      : undefined,
    failurePolicy: 'Fail',
    sideEffects: 'None',
    timeoutSeconds: 5,
    admissionReviewVersions: ['v1'],
  };
}

interface NamedRule {
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
  verbs: string[];
}

/**
 * The rights to keep the webhooks trusted: the certificate's Secret, and the `caBundle` of the
 * configurations and of the converting CRDs (reading their storedVersions, and trimming them) —
 * those objects only, by name. With cert-manager, its cainjector writes every caBundle and the
 * reconciler only reads the CRDs.
 */
function addTrustRbac(scope: Construct, clusterScope: Construct, props: WebhookObjectsProps): void {
  const { plan, namespace, labels } = props;
  const keepsTrust = plan.certManager === undefined;
  const subjects = [{ kind: 'ServiceAccount', name: props.serviceAccount, namespace }];
  if (keepsTrust) {
    const role = new k8s.KubeRole(scope, 'WebhookCertificateRole', {
      metadata: { name: `${plan.secret}-role`, namespace, labels },
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [plan.secret], verbs: ['get', 'patch'] }],
    });
    new k8s.KubeRoleBinding(scope, 'WebhookCertificateRoleBinding', {
      metadata: { name: `${plan.secret}-rolebinding`, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.name },
      subjects,
    });
  }
  const configurationRules = trustRules(plan, keepsTrust);
  if (configurationRules.length === 0) return;
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

function trustRules(plan: WebhookPlan, keepsTrust: boolean): NamedRule[] {
  const rules: NamedRule[] = [];
  const crds = plan.converting.map((k) => k.crdName);
  if (crds.length > 0) {
    rules.push(
      // The CRDs' conversion caBundle; reading storedVersions.
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: crds,
        verbs: keepsTrust ? ['get', 'patch'] : ['get'],
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
  const configuration = (resource: string): NamedRule => ({
    apiGroups: ['admissionregistration.k8s.io'],
    resources: [resource],
    resourceNames: [plan.configuration],
    verbs: ['get', 'patch'],
  });
  if (keepsTrust && plan.validating.length > 0) rules.push(configuration('validatingwebhookconfigurations'));
  if (keepsTrust && plan.mutating.length > 0) rules.push(configuration('mutatingwebhookconfigurations'));
  return rules;
}

function annotations(plan: WebhookPlan): Record<string, string> | undefined {
  return Object.keys(plan.trustAnnotations).length > 0 ? { ...plan.trustAnnotations } : undefined;
}

/**
 * cert-manager's Certificate for the webhook Service's names, kept in the Secret the reconciler
 * mounts, and (unless an issuer is given) the self-signed Issuer that signs it: a self-signed
 * certificate's Secret carries itself as `ca.crt`, which cainjector writes into the caBundles.
 */
function addCertManagerCertificate(
  scope: Construct,
  plan: WebhookPlan,
  certManager: CertManagerPlan,
  namespace: string,
  labels: Record<string, string>,
): void {
  const { issuer } = certManager;
  if (certManager.ownIssuer) {
    new ApiObject(scope, 'WebhookIssuer', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: issuer.name, namespace, labels },
      spec: { selfSigned: {} },
    });
  }
  new ApiObject(scope, 'WebhookServingCertificate', {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: certManager.certificate, namespace, labels },
    spec: {
      // The names the API server checks when it calls the Service.
      dnsNames: [`${plan.service}.${namespace}.svc`, `${plan.service}.${namespace}.svc.cluster.local`],
      secretName: plan.secret,
      issuerRef: { name: issuer.name, kind: issuer.kind, group: issuer.group },
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    },
  });
}
