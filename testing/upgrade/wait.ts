/** Waiting on a condition, never on time alone: polled until true, with a generous limit for a busy machine. */
const LIMIT_MS = 180_000;
const POLL_MS = 250;

export async function waitUntil(
  what: string,
  condition: () => boolean | Promise<boolean>,
  context: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + LIMIT_MS;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${context()}`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
