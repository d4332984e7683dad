/**
 * The webhook client configs of the objects that call the operator — the Validating/Mutating
 * WebhookConfigurations' webhooks and a CRD's conversion webhook — and one way to change them:
 * a JSON patch of the object as read, its resourceVersion the precondition. Both keeping the
 * self-managed certificate trusted (`caBundle`) and pointing them at loopback use it.
 */
import type { KubeObject, ResourceType } from '../../../constructs/contract';
import { isJsonObject } from '../../../constructs/contract/json';
import { isNotFound, type JsonPatchOperation, type KubeClient } from '../client';

/** A webhook's `clientConfig` (admissionregistration and apiextensions share its shape). */
export interface ClientConfig {
  url?: string;
  service?: { name?: string; namespace?: string; path?: string; port?: number };
  caBundle?: string;
}

/** A client config in an object, with its JSON pointer. */
export interface ClientConfigAt {
  readonly path: string;
  readonly config: ClientConfig;
}

/** Each webhook's client config in a Validating/MutatingWebhookConfiguration. */
export function webhookClientConfigs(o: KubeObject): ClientConfigAt[] {
  const webhooks = Array.isArray(o.webhooks) ? o.webhooks : [];
  return webhooks.flatMap((w: unknown, i) => {
    const config = isJsonObject(w) ? clientConfig(w.clientConfig) : undefined;
    return config ? [{ path: `/webhooks/${i}/clientConfig`, config }] : [];
  });
}

/** A client config as read: its url, its service's path and its CA bundle, where they are strings. */
function clientConfig(v: unknown): ClientConfig | undefined {
  if (!isJsonObject(v)) return undefined;
  const text = (x: unknown) => (typeof x === 'string' ? x : undefined);
  const s = isJsonObject(v.service) ? v.service : undefined;
  const service = s && {
    name: text(s.name),
    namespace: text(s.namespace),
    path: text(s.path),
    port: typeof s.port === 'number' ? s.port : undefined,
  };
  return { url: text(v.url), service, caBundle: text(v.caBundle) };
}

/** A CRD's conversion webhook client config, when its conversion strategy is Webhook. */
export function conversionClientConfigs(o: KubeObject): ClientConfigAt[] {
  const conversion = isJsonObject(o.spec) && isJsonObject(o.spec.conversion) ? o.spec.conversion : undefined;
  const webhook =
    conversion?.strategy === 'Webhook' && isJsonObject(conversion.webhook) ? conversion.webhook : undefined;
  const config = clientConfig(webhook?.clientConfig);
  return config ? [{ path: '/spec/conversion/webhook/clientConfig', config }] : [];
}

/** A JSON patch operation on an object's client configs: one that sets a value. */
export interface PatchOperation extends JsonPatchOperation {
  readonly op: 'add' | 'replace';
  readonly value: unknown;
}

/**
 * Reads the object, asks `change` for the operations its client configs need, and applies them
 * in one JSON patch guarded by the resourceVersion read. Resolves with how many were applied;
 * with undefined for an object not installed (nothing calls it, nothing to change).
 */
export async function patchClientConfigs(
  client: KubeClient,
  type: ResourceType,
  name: string,
  change: (object: KubeObject) => PatchOperation[],
): Promise<number | undefined> {
  let object: KubeObject;
  try {
    object = await client.get(type, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const ops = change(object);
  if (ops.length === 0) return 0;
  await client.jsonPatch(type, name, undefined, [
    { op: 'test', path: '/metadata/resourceVersion', value: object.metadata.resourceVersion },
    ...ops,
  ]);
  return ops.length;
}
