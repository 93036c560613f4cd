// Tests that change a P2PTEL_TEST_* setting for a while: what the process had is put back after.

/**
 * The current values of the environment variables `names`; the function returned puts each back
 * as it was (removing those that were unset), whatever the test set meanwhile.
 */
export function keepEnv(...names: string[]): () => void {
  const saved = names.map((name) => [name, process.env[name]] as const);
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
