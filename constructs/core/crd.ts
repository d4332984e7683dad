import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { claimUnique } from './unique';
import { type CustomResourceKind } from './kind';

export interface CustomResourceDefinitionProps {
  /** The kind to define. */
  readonly kind: CustomResourceKind;
  /** Extra labels for the CRD object. @default - none */
  readonly labels?: Record<string, string>;
}

/**
 * An `apiextensions.k8s.io/v1` CustomResourceDefinition for a custom kind: every version served
 * with the same structural schema, status (and scale, when the kind has one) subresources,
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
    if (k.props.scale) {
      subresources.scale = {
        specReplicasPath: k.props.scale.specReplicasPath,
        statusReplicasPath: k.props.scale.statusReplicasPath,
        ...(k.props.scale.labelSelectorPath ? { labelSelectorPath: k.props.scale.labelSelectorPath } : {}),
      };
    }
    const printerColumns = [
      ...(k.props.printerColumns ?? []).map((c) => ({ ...c })),
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ];
    const schema = k.openApiSchema();
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: k.crdName, labels: props.labels },
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
          schema: { openAPIV3Schema: structuredClone(schema) },
          subresources,
          additionalPrinterColumns: printerColumns,
        })),
      },
    });
  }
}
