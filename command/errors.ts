/** What the command cannot do with what it was given, said in one line (exit 1, no stack). */
export class RenderError extends Error {}

/** A kind's CRD is not in the cluster: there is nothing of it to read. */
export class NotInstalledError extends RenderError {}
