/**
 * The way through each refusal the API server gives a child, appended to its words in the
 * resource's status (docs/failures.md promises "the message says the way through"). The API
 * server's message says what it refused; these say what a user does about it, for the refusals a
 * kind's child meets when its spec changes in a way that cannot apply in place.
 */

/** The child a refusal is about. */
export interface RefusedChild {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  /** Whether it exists (a refused update), or not (a refused create). */
  readonly exists: boolean;
}

interface Hint {
  /** Whether the refusal's text is this case. */
  readonly matches: (said: string, child: RefusedChild) => boolean;
  readonly says: (child: RefusedChild) => string;
}

/** `kubectl <verb> <kind> <name> [-n <namespace>]`, as a user types it. */
function kubectlOn(verb: string, child: RefusedChild, extra = ''): string {
  const ns = child.namespace ? ` -n ${child.namespace}` : '';
  return `kubectl ${verb} ${child.kind.toLowerCase()} ${child.name}${ns}${extra}`;
}

/** Most specific first: the first that matches is the one given. */
const HINTS: readonly Hint[] = [
  {
    // The StatefulSet's own rule: everything but a few fields is fixed at creation.
    matches: (said) => said.includes('updates to statefulset spec for fields other than'),
    says: (child) =>
      `A StatefulSet changes in place only its replicas, ordinals, template, updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds. ` +
      `To apply the rest, delete it but keep its pods (${kubectlOn('delete', child, ' --cascade=orphan')}): the operator makes it again from the new spec and it takes the running pods over, none restarted. ` +
      `A new claim template field (other than a larger size, which the operator grows itself where the StorageClass allows volume expansion) is then used only for claims made after`,
  },
  {
    matches: (said, child) => child.kind === 'PersistentVolumeClaim' && said.includes('can not be less than'),
    says: () => 'A claim never shrinks: keep the size, or move the data to a new, smaller claim',
  },
  {
    // The API server's resize admission: the claim's StorageClass does not allow expansion.
    matches: (said, child) =>
      child.kind === 'PersistentVolumeClaim' && said.includes('only dynamically provisioned pvc can be resized'),
    says: () =>
      'A claim grows only where its StorageClass allows volume expansion (allowVolumeExpansion: true) and its volume was provisioned by it: a cluster admin can set it on the class if its provisioner can expand volumes; or set the size back',
  },
  {
    matches: (said, child) =>
      child.kind === 'PersistentVolumeClaim' && said.includes('spec is immutable after creation'),
    says: () =>
      'A claim changes after creation only its requested size (and only up, where its StorageClass allows expansion): for any other change, move the data to a new claim; the old one holds the data until you delete it',
  },
  {
    matches: (said) => /admission webhook "[^"]+" denied the request/.test(said),
    says: () =>
      "An admission webhook of the cluster refused it, for the reason it gives: change the resource's spec so that the webhook allows it, or ask the cluster's administrators about the webhook",
  },
  {
    matches: (said) => /ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request/.test(said),
    says: () =>
      "A ValidatingAdmissionPolicy of the cluster refused it, for the reason it gives: change the resource's spec so that the policy allows it, or ask the cluster's administrators about the policy",
  },
  {
    matches: (said, child) => child.exists && said.includes('field is immutable'),
    says: (child) =>
      `The API server does not change an immutable field in place: delete the ${child.kind} (${kubectlOn('delete', child)}) and the operator makes it again from the new spec`,
  },
];

/** What to do about the API server's refusal `said` of `child`, or undefined when no case is known. */
export function refusalHint(said: string, child: RefusedChild): string | undefined {
  const hint = HINTS.find((h) => h.matches(said, child));
  return hint?.says(child);
}

/** The API server's words `said`, followed by the way through when the case is known. */
export function withRefusalHint(said: string, child: RefusedChild): string {
  const how = refusalHint(said, child);
  return how ? `${said}. ${how}` : said;
}
