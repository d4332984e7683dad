import type { KindDescriptor } from './kind';

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

/**
 * The named container port the reconciler serves its webhooks on, which the operator's webhook
 * Service targets (port 443).
 */
export const WEBHOOK_PORT_NAME = 'webhook';

/** The distinct kinds of these controllers whose versions need the `/convert` webhook. */
export function convertingKinds<K extends KindDescriptor>(controllers: readonly { readonly for: K }[]): K[] {
  return [...new Set(controllers.map((c) => c.for))].filter((k) => k.needsConversion);
}
