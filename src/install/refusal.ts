/** Why install or uninstall will not go on: one line, said as it is (src/cli prints it and exits 1). */
export class InstallRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstallRefusal';
  }
}
