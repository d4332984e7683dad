import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { claimUnique } from './unique';
import { type CustomResourceKind } from './kind';

export interface CustomResourceDefinitionProps {
  /** The kind to define. */
  readonly kind: CustomResourceKind;
  /** Extra labels for the CRD object. @default - none */
  readonly labels?: Record<string, string>;
  /** Annotations of the CRD object (e.g. cert-manager's `inject-ca-from`). @default - none */
  readonly annotations?: Record<string, string>;
  /**
   * Where the API server calls to convert between versions, for a kind whose versions have
   * schemas of their own (`conversions`): the operator's webhook Service (the Operator
   * construct passes it), or a URL. Its `caBundle` is left out: the operator keeps it current
   * (or cert-manager's cainjector, through the `inject-ca-from` annotation).
   * @default none; required for a kind with conversions
   */
  readonly conversionWebhook?: ConversionWebhook;
}

/** The address of a `/convert` webhook (`apiextensions.k8s.io/v1` WebhookClientConfig). */
export type ConversionWebhook =
  | {
      readonly service: {
        readonly name: string;
        readonly namespace: string;
        readonly path: string;
        readonly port: number;
      };
    }
  | { readonly url: string };

/**
 * An `apiextensions.k8s.io/v1` CustomResourceDefinition for a custom kind: every version served
 * with its structural schema (converted by the operator's webhook when they differ), status (and scale, when the kind has one) subresources,
 * printer columns, short names and categories.
 *
 * Emitted as a raw ApiObject rather than the generated L1 class, because the L1 class renames
 * schema keys from camelCase and would drop the `x-kubernetes-*` extensions already spelled in
 * wire form here.
 */
export class CustomResourceDefinition extends Construct {
  readonly kind: CustomResourceKind;
  readonly apiObject: ApiObject;

  constructor(scope: Construct, id: string, props: CustomResourceDefinitionProps) {
    super(scope, id);
    const k = props.kind;
    this.kind = k;
    claimUnique(
      this,
      `crd:${k.crdName}`,
      (first) =>
        `CRD ${k.crdName} is already defined at ${first}; a kind belongs to one operator — give its controllers to that one`,
    );
    const subresources: Record<string, unknown> = { status: {} };
    if (k.scale) subresources.scale = { ...k.scale };
    const printerColumns = [
      ...(k.props.printerColumns ?? []).map((c) => ({ ...c })),
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ];
    if (k.needsConversion && !props.conversionWebhook)
      throw new Error(
        `CRD ${k.crdName}: versions ${k.versions.join(', ')} have schemas of their own, so the API server needs a conversion webhook; give conversionWebhook (the Operator construct does)`,
      );
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: k.crdName,
        labels: props.labels,
        ...(props.annotations && Object.keys(props.annotations).length > 0
          ? { annotations: { ...props.annotations } }
          : {}),
      },
      spec: {
        group: k.group,
        scope: k.scope,
        names: {
          kind: k.kind,
          listKind: `${k.kind}List`,
          plural: k.plural,
          singular: k.singular,
          ...(k.props.shortNames?.length ? { shortNames: [...k.props.shortNames] } : {}),
          ...(k.props.categories?.length ? { categories: [...k.props.categories] } : {}),
        },
        versions: k.versions.map((name) => ({
          name,
          served: true,
          storage: name === k.storageVersion,
          schema: { openAPIV3Schema: structuredClone(k.openApiSchema(name)) },
          subresources,
          additionalPrinterColumns: printerColumns,
        })),
        ...(k.needsConversion && props.conversionWebhook
          ? {
              conversion: {
                strategy: 'Webhook',
                webhook: { clientConfig: { ...props.conversionWebhook }, conversionReviewVersions: ['v1'] },
              },
            }
          : {}),
      },
    });
  }
}
