/** A bad command line (hcn-cni's operator tool, hcn-sim): the CLI prints the message and a hint, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
